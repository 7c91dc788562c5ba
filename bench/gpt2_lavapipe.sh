#!/usr/bin/env bash
# GPT-2 small (124M) on this machine's device, usually lavapipe: a random-weights GPT-2 124M in Hugging Face's layout
# (bench/reference.py random-gpt2), imported at its 1024-token block; then attn_bench_probe (a probe of 64 tokens,
# first and warm, each as a ratio to the 3 s target) and the window under Xvfb: Ctrl+O loads the run, training
# starts, and F12 screenshots every 4 s show how long a frame takes to come while the 765-GFLOP step runs (all 12 x 12
# heads shown for the second half). Prints the seconds of each. Takes about 5 minutes and 6 GB of memory.
# Usage: bench/gpt2_lavapipe.sh
# Needs build/attnlab, build/attn_bench_probe, Debian's python3-torch, GPT-2's tokenizer (assets/gpt2, scripts/setup.sh)
# and xvfb-run, openbox, xdotool (apt-get install xvfb xauth openbox xdotool x11-utils).
set -euo pipefail
cd "$(dirname "$0")/.."
for f in build/attnlab build/attn_bench_probe; do
    [ -x "$f" ] || { echo "$f is missing: cmake --build build" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 bench/reference.py random-gpt2 "$tmp/g124" --size 124M --tokenizer assets/gpt2 >/dev/null
t0=$(date +%s.%N)
build/attnlab import gpt2 "$tmp/g124" -o "$tmp/g124.safetensors" >/dev/null
echo "import gpt2: $(echo "$(date +%s.%N) - $t0" | bc) s"
rm -rf "$tmp/g124"
build/attn_bench_probe "$tmp/g124.safetensors" 64
BIN=$(realpath build/attnlab) CORPUS=$(realpath assets/tinyshakespeare.txt) RUN=$tmp/g124.safetensors
export RUN
. tests/window_session.sh
window_session 900 "" '
    cp "$RUN" big.safetensors
    start app.out --preset single-head --checkpoint "$work/big.safetensors" --autosave 0
    wait_steps 3 || fail "the window did not train"
    pause
    t0=$(date +%s.%N)
    key ctrl+o
    wait_for app.out "^attnlab: loaded" 600 || fail "Ctrl+O did not load the run"
    echo "the window: Ctrl+O loaded it in $(echo "$(date +%s.%N) - $t0" | bc) s"
    key space
    for i in $(seq 1 12); do
        a=$(date +%s.%N); s=$(shot_step) || fail "F12 wrote no screenshot"; b=$(date +%s.%N)
        echo "training, step $s: a frame (F12) came in $(echo "$b - $a" | bc) s"
        [ "$i" = 6 ] && { key h; echo "all heads shown (H)"; }
        sleep 4
    done
    close_window
'
