#!/usr/bin/env bash
# Installs what bench/reference.py needs: Debian's python3-torch (CPU PyTorch),
# python3-numpy and an OpenBLAS build (libopenblas0-pthread), via apt-get.
# Needs root or sudo. Idempotent: does nothing if everything is already there.
set -euo pipefail

pkgs=(python3-torch python3-numpy libopenblas0-pthread)
missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup_pytorch: all present (${pkgs[*]})"
else
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null; then SUDO="sudo"; else
      echo "setup_pytorch: need root or sudo to install: ${missing[*]}" >&2; exit 1; fi
  fi
  echo "setup_pytorch: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

# Debian's python3-torch is for Debian's interpreter: use /usr/bin/python3 (a pyenv/venv python3 on PATH
# would not see it); bench/compare_pytorch.sh does the same (override with PYTHON=...).
PY=${PYTHON:-/usr/bin/python3}
"$PY" - <<'PY'
import torch, numpy
import sys
print(f"setup_pytorch: {sys.executable}: torch {torch.__version__}, numpy {numpy.__version__}, "
      f"threads {torch.get_num_threads()}")
PY
