#!/usr/bin/env bash
# The window reaches the headless numbers: same preset and seed, the same step,train_loss,val_loss rows in --metrics
# at steps 0, 20 and 40 (both follow one evaluation schedule; sampling and the UI do not touch the trainer's RNG).
# Usage: app_matches_headless_test.sh PATH/TO/attnlab PATH/TO/corpus.txt   (exit 0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
. "$(dirname "$0")/window_session.sh"
need_tools xvfb-run
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

timeout 600 "$BIN" --headless --quiet --data "$CORPUS" --preset single-head --max-iters 40 --eval-interval 20 \
    --eval-iters 5 --sample-chars 0 --metrics "$OUT/A.csv" >"$OUT/a.out" 2>&1 ||
    { cat "$OUT/a.out" >&2; fail "headless run failed"; }
window_run 600 --data "$CORPUS" --preset single-head --exit-after-steps 40 \
    --eval-interval 20 --eval-iters 5 --max-iters 40 --metrics "$OUT/B.csv" >"$OUT/b.out" 2>&1 ||
    { cat "$OUT/b.out" >&2; fail "window run failed"; }

rows() { awk -F, -v s="$2" '$1 == s { print $1 "," $2 "," $3 }' "$1"; }
[ "$(head -1 "$OUT/A.csv")" = "step,train_loss,val_loss,tokens_per_s" ] || fail "headless CSV header: $(head -1 "$OUT/A.csv")"
[ "$(head -1 "$OUT/B.csv")" = "step,train_loss,val_loss,tokens_per_s" ] || fail "window CSV header: $(head -1 "$OUT/B.csv")"
for s in 0 20 40; do
    a=$(rows "$OUT/A.csv" $s)
    b=$(rows "$OUT/B.csv" $s)
    [ -n "$a" ] || fail "headless CSV has no row for step $s"
    [ "$(printf '%s\n' "$b" | grep -c .)" -eq 1 ] || fail "window CSV should have exactly one row for step $s (got '$b')"
    [ "$a" = "$b" ] || fail "step $s: headless '$a' but window '$b'"
    echo "step $s: $a (both)"
done
[ "$(wc -l <"$OUT/A.csv")" -eq "$(wc -l <"$OUT/B.csv")" ] ||
    fail "different numbers of evaluations: headless $(wc -l <"$OUT/A.csv") lines, window $(wc -l <"$OUT/B.csv") lines"
echo "PASS"
