#!/usr/bin/env bash
# The full-size gpt model (6 layers x 6 heads, n_embd 384, block 256) trains in the window while the window keeps
# drawing: the trainer cuts each step (seconds on lavapipe) into many submits, so frames run between them.
# Checked against the step's own length, not a fixed time: the longest gap between two frames must stay under
# half a training step (with one submit per step it is a whole step), as the app reports at the end.
# Usage: app_gpt_responsive_test.sh PATH/TO/attnlab PATH/TO/corpus.txt   (exit 0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
. "$(dirname "$0")/window_session.sh"
need_tools xvfb-run
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# batch 8: a step takes several seconds here (the preset's 64 about a minute); one evaluation batch, short samples
window_run 900 --validation --preset gpt --batch-size 8 --exit-after-steps 4 \
    --eval-interval 1000 --eval-iters 1 --sample-chars 20 --data "$CORPUS" >"$OUT/stdout" 2>"$OUT/stderr"
rc=$?
cat "$OUT/stdout"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ $rc -eq 0 ] || { cat "$OUT/stderr" >&2; fail "attnlab exited $rc (want 0)"; }
nval=$(grep -c '\[validation\]' "$OUT/stderr")
[ "$nval" -eq 0 ] || { grep '\[validation\]' "$OUT/stderr" | head -20 >&2; fail "$nval validation message(s)"; }
line=$(grep 'attnlab: drew .* frames during .* training steps' "$OUT/stdout") || fail "the window reported no frame count"
gap=$(sed -E 's/.*longest gap ([0-9]+) ms.*/\1/' <<<"$line")
step=$(sed -E 's/.* ([0-9.]+) ms per step.*/\1/' <<<"$line")
awk -v g="$gap" -v s="$step" 'BEGIN { exit !(g < 0.5 * s) }' || fail "the window drew nothing for $gap ms of a $step ms step"
echo "frames: $line"

# Quitting (here SIGTERM, which quits as closing the window does) while the first evaluation runs (200 batches of a
# few seconds each here) stops it at its next batch: the window is gone in seconds, not after the whole evaluation.
window_session 300 "" '
    "$BIN" --preset gpt --batch-size 8 --eval-iters 200 --autosave 0 --data "$CORPUS" >quit.out 2>&1 &
    pid=$!
    # the model built and the step-0 evaluation under way: it says so
    wait_for quit.out "^attnlab: built preset gpt, .*; estimating the loss$" 120 ||
        fail "the window did not report its model built within 120 s"
    t0=$(date +%s)
    kill -TERM "$pid"
    wait_exit 60 || fail "attnlab did not quit within 60 s of SIGTERM, during the evaluation"
    quit_s=$(( $(date +%s) - t0 ))
    [ "$rc" -eq 143 ] || fail "after SIGTERM attnlab exited with $rc (want 143)"
    grep -qx "attnlab: SIGTERM: closing the window" quit.out || fail "no clean quit after SIGTERM"
    [ "$quit_s" -le 20 ] || fail "quitting during the evaluation took $quit_s s"
    echo "PASS: frames during long steps; quit during the first evaluation in $quit_s s"
'
