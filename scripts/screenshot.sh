#!/usr/bin/env bash
# Regenerates docs/screenshot.png, the README's picture: the app's own screenshot of the window at its default size
# (1280x800, under Xvfb) after the single-head preset has trained 2000 steps with an estimate every 100.
# Usage: bash scripts/screenshot.sh [OUT.png]   (needs a build: bash scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/screenshot.png}
[ -x build/attnlab ] || { echo "no build/attnlab: run bash scripts/setup.sh first" >&2; exit 2; }
command -v xvfb-run >/dev/null || { echo "xvfb-run is missing: apt-get install xvfb xauth" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -f assets/tinyshakespeare.txt ] || { echo "no assets/tinyshakespeare.txt: run bash scripts/setup.sh first" >&2; exit 2; }
# from the checkout, so the corpus field reads assets/tinyshakespeare.txt (such a run neither autosaves nor resumes)
timeout 600 xvfb-run -a -s "-screen 0 1280x800x24" build/attnlab --data assets/tinyshakespeare.txt --preset single-head \
    --eval-interval 100 --eval-iters 50 --exit-after-steps 2000 --screenshot "$tmp/shot.png"
mv "$tmp/shot.png" "$out"
echo "wrote $out"
