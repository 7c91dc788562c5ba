#!/usr/bin/env bash
# The full-size gpt model (6 layers x 6 heads, n_embd 384, block 256) trains in the window while the window keeps
# drawing: the trainer cuts each step (seconds on lavapipe) into many submits, so frames run between them.
# Checked against the step's own length, not a fixed time: the longest gap between two frames must stay under
# half a training step (with one submit per step it is a whole step), as the app reports at the end.
# Usage: app_gpt_responsive_test.sh PATH/TO/attnlab PATH/TO/corpus.txt   (exit 0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
command -v xvfb-run >/dev/null || { echo "SKIP: xvfb-run is not installed (apt-get install xvfb xauth)"; exit 77; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# batch 8: a step takes several seconds here (the preset's 64 about a minute); one evaluation batch, short samples
timeout 900 xvfb-run -a -s "-screen 0 1280x800x24" "$BIN" --validation --preset gpt --batch-size 8 --exit-after-steps 4 \
    --eval-interval 1000 --eval-iters 1 --sample-chars 20 --data "$CORPUS" >"$OUT/stdout" 2>"$OUT/stderr"
rc=$?
cat "$OUT/stdout"
[ $rc -eq 0 ] || { cat "$OUT/stderr" >&2; fail "attnlab exited $rc (want 0)"; }
nval=$(grep -c '\[validation\]' "$OUT/stderr")
[ "$nval" -eq 0 ] || { grep '\[validation\]' "$OUT/stderr" | head -20 >&2; fail "$nval validation message(s)"; }
line=$(grep 'attnlab: drew .* frames during .* training steps' "$OUT/stdout") || fail "the window reported no frame count"
gap=$(sed -E 's/.*longest gap ([0-9]+) ms.*/\1/' <<<"$line")
step=$(sed -E 's/.* ([0-9.]+) ms per step.*/\1/' <<<"$line")
awk -v g="$gap" -v s="$step" 'BEGIN { exit !(g < 0.5 * s) }' || fail "the window drew nothing for $gap ms of a $step ms step"
echo "frames: $line"

# Quitting (here SIGTERM, which quits as closing the window does) while the first evaluation runs (400 batches of a few seconds
# each here) stops it at its next batch: the window is gone in seconds, not after the whole evaluation.
BIN=$(realpath "$BIN") CORPUS=$(realpath "$CORPUS")
export BIN CORPUS OUT
timeout 300 xvfb-run -a -s "-screen 0 1280x800x24" bash -c '
    cd "$OUT"
    "$BIN" --preset gpt --batch-size 8 --eval-iters 200 --autosave 0 --data "$CORPUS" >"$OUT/quit.out" 2>&1 &
    pid=$!
    # the model built and the step-0 evaluation under way (it says so), a few of its batches done
    built="^attnlab: built preset gpt, .*; estimating the loss$"
    for ((i = 0; i < 1200; i++)); do grep -q "$built" "$OUT/quit.out" && break; sleep 0.1; done
    if ! grep -q "$built" "$OUT/quit.out"; then
        kill -KILL $pid; wait $pid
        echo "rc=none quit_s=none (attnlab did not report the model built within 120 s)" >"$OUT/quit.txt"
        exit 0
    fi
    sleep 3
    t0=$(date +%s)
    kill -TERM $pid
    wait $pid
    echo "rc=$? quit_s=$(( $(date +%s) - t0 ))" >"$OUT/quit.txt"'
cat "$OUT/quit.txt" 2>/dev/null
read -r rc_part quit_part <"$OUT/quit.txt" || fail "the quit run did not finish"
[ "$rc_part" = "rc=none" ] && { cat "$OUT/quit.out" >&2; fail "the window did not report its model built within 120 s"; }
[ "$rc_part" = "rc=143" ] || { cat "$OUT/quit.out" >&2; fail "after SIGTERM attnlab exited with ${rc_part#rc=} (want 143)"; }
grep -qx "attnlab: SIGTERM: closing the window" "$OUT/quit.out" || { cat "$OUT/quit.out" >&2; fail "no clean quit after SIGTERM"; }
[ "${quit_part#quit_s=}" -le 20 ] || fail "quitting during the evaluation took ${quit_part#quit_s=} s"
echo "PASS: frames during long steps; quit during the first evaluation in ${quit_part#quit_s=} s"
