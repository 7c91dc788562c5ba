#!/usr/bin/env bash
# nanoGPT's CPU recipe (--preset nanogpt-cpu: 4 layers, 4 heads, n_embd 128, block 64, batch 12, 2000 steps,
# eval_iters 20) trained by Attention Lab and by the project's PyTorch reference of the same model and loop
# (bench/reference.py train --preset nanogpt-cpu), back to back on this machine. Prints one row each: the final
# val loss, the training time (steps only, evaluations excluded), ms a step, the wall time, and the ratio of
# training times (PyTorch / Attention Lab: above 1, Attention Lab is faster).
# Usage: bench/nanogpt_cpu.sh [--threads N (PyTorch's, default 1)] [ATTNLAB FLAGS...]
# Needs build/attnlab and Debian's python3-torch with OpenBLAS (bash bench/setup_pytorch.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
threads=1
if [ "${1:-}" = "--threads" ]; then threads=$2; shift 2; fi
[ -x build/attnlab ] || { echo "build/attnlab is missing: bash scripts/setup.sh" >&2; exit 2; }
PY=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t0=$(date +%s.%N)
build/attnlab --headless --quiet --preset nanogpt-cpu --sample-chars 0 --metrics "$tmp/ours.csv" "$@" >/dev/null 2>"$tmp/ours.err" || { cat "$tmp/ours.err" >&2; exit 1; }
t1=$(date +%s.%N)
# our training time: each evaluation row's tokens/s covers the steps since the row before (eval_interval of them)
read -r val train_s steps <<<"$(awk -F, 'NR == 2 { p = $1 } NR > 2 { s += ($1 - p) * 12 * 64 / $4; p = $1; v = $3 } END { printf "%s %.2f %d", v, s, p }' "$tmp/ours.csv")"
"$PY" bench/reference.py train --preset nanogpt-cpu --threads "$threads" --quiet >"$tmp/torch.out"
t2=$(date +%s.%N)
res=$(grep '^RESULT' "$tmp/torch.out")
tval=$(sed 's/.*val_loss=\([^ ]*\).*/\1/' <<<"$res")
ttrain=$(sed 's/.*train_seconds=\([^ ]*\).*/\1/' <<<"$res")
tms=$(sed 's/.*ms_per_step=\([^ ]*\).*/\1/' <<<"$res")
blas=$(sed 's/.*blas=\([^ ]*\).*/\1/' <<<"$res")
printf '| side | val loss @ %d | training s | ms/step | wall s |\n|---|---|---|---|---|\n' "$steps"
printf '| Attention Lab (%s) | %.4f | %.1f | %.1f | %.1f |\n' "commit $(git rev-parse --short HEAD)" "$val" "$train_s" \
    "$(awk -v s="$train_s" -v n="$steps" 'BEGIN{print 1000 * s / n}')" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b - a}')"
printf '| PyTorch %s, %s thread(s), OpenBLAS %s | %.4f | %.1f | %.1f | %.1f |\n' \
    "$("$PY" -c 'import torch; print(torch.__version__)')" "$threads" "$blas" "$tval" "$ttrain" "$tms" \
    "$(awk -v a="$t1" -v b="$t2" 'BEGIN{print b - a}')"
printf 'training time ratio PyTorch / Attention Lab: %.2f\n' "$(awk -v a="$ttrain" -v b="$train_s" 'BEGIN{print a / b}')"
