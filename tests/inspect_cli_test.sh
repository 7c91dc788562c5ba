#!/usr/bin/env bash
# `attnlab inspect`: a headless run's time-lapse lists its steps, a recorded step prints the probe's attention,
# losses, predictions and head summaries ending with the mean entropy, which falls as attention forms; the
# checkpoint's own weights computed anew give the numbers recorded at its last step; bad input exits 2 with one line.
# Usage: inspect_cli_test.sh PATH/TO/attnlab PATH/TO/corpus.txt   (exit 0 pass, 1 fail)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
. "$(dirname "$0")/inspect_lib.sh"  # fail, bad
CK=$OUT/run.safetensors

"$BIN" --headless --quiet --data "$CORPUS" --preset single-head --max-iters 500 --eval-interval 250 --eval-iters 5 \
    --sample-chars 0 --save "$CK" --probe "?First Citizen" >"$OUT/train.out" 2>&1 || { cat "$OUT/train.out"; fail "training failed"; }
grep -qx "attnlab: the probe is longer than the block size (8): its last 8 characters are used" "$OUT/train.out" ||
    { cat "$OUT/train.out"; fail "a probe longer than the block was not said to be cut"; }

"$BIN" inspect "$CK" --list >"$OUT/list" 2>&1 || { cat "$OUT/list"; fail "--list failed"; }
cat "$OUT/list"
grep -qF 'a time-lapse of the probe " Citizen" (8 characters)' "$OUT/list" ||
    fail "--list does not name the probe"
steps=$(awk 'NR > 2 { printf "%s ", $1 }' "$OUT/list")
[ "$steps" = "0 1 2 3 4 5 6 8 10 12 15 20 25 30 40 50 60 80 100 120 150 200 250 300 400 500 " ] ||
    fail "recorded steps: $steps"
grep -qE "^ +500 +[0-9.]+ +[0-9.]+ +[0-9.]+ +fp32$" "$OUT/list" || fail "--list does not give step 500's val loss and fp32 storage"

entropy() { "$BIN" inspect "$CK" --step "$1" | tail -1 | sed -E 's/^mean attention entropy: ([0-9.]+)$/\1/'; }
"$BIN" inspect "$CK" --step 0 >"$OUT/s0" 2>&1 || { cat "$OUT/s0"; fail "--step 0 failed"; }
tail -1 "$OUT/s0" | grep -qE "^mean attention entropy: [0-9]+\.[0-9]{4}$" || fail "--step 0 does not end with the mean entropy"
grep -q "recorded at step 0" "$OUT/s0" || fail "--step 0 is not the recorded snapshot"
grep -qE "^L1 H1 " "$OUT/s0" || fail "no head summary"
e0=$(entropy 0); e500=$(entropy 480)   # 480: the nearest recorded step, 500
echo "mean attention entropy: step 0 $e0, step 500 $e500"
awk -v a="$e0" -v b="$e500" 'BEGIN { exit !(b < a) }' || fail "attention did not sharpen: entropy $e0 at step 0, $e500 at step 500"

# the checkpoint's weights are those of step 500: computed anew, the numbers recorded there
"$BIN" inspect "$CK" --data "$CORPUS" | tail -n +2 >"$OUT/anew" || fail "inspect at the checkpoint's weights failed"
"$BIN" inspect "$CK" --step 500 | tail -n +2 >"$OUT/recorded"
diff "$OUT/anew" "$OUT/recorded" || fail "computed anew differs from the snapshot recorded at step 500"
"$BIN" inspect "$CK" --probe "To be or" | grep -qx 'probe (8 characters): "To be or"' || fail "--probe is not used"
# a character the corpus lacks stays in place, marked, with no loss; the note says so
"$BIN" inspect "$CK" --probe "To bé" >"$OUT/unknown" 2>"$OUT/unknown.err" || fail "--probe with an unknown character failed"
grep -qx 'probe (5 characters): "To b⟨é⟩"' "$OUT/unknown" || fail "the unknown é is not marked in place: $(sed -n 2p "$OUT/unknown")"
grep -qE '^ +4 ⟨é⟩ +no loss ' "$OUT/unknown" || fail "the unknown é should have no loss"
grep -q "not in the corpus, marked in place and given no loss: é" "$OUT/unknown.err" || fail "no note on the unknown é"

# any text at any recorded step, from the weights recorded there: at step 500 the same numbers as the checkpoint's
"$BIN" inspect "$CK" --probe "To be or" | tail -n +2 >"$OUT/anew_text"
"$BIN" inspect "$CK" --probe "To be or" --step 500 >"$OUT/step_text" 2>&1 || { cat "$OUT/step_text"; fail "--step 500 --probe failed"; }
grep -q "computed from the weights recorded at step 500 (fp32)" "$OUT/step_text" || fail "--step --probe does not say where it comes from"
tail -n +2 "$OUT/step_text" | diff "$OUT/anew_text" - || fail "another text at step 500 differs from the checkpoint's weights"
"$BIN" inspect "$CK" --probe "To be or" --step 20 | grep -q "recorded at step 20" || fail "--step 20 --probe"
# a sample with one seed: the same twice at one step, another at another step
s0=$("$BIN" inspect "$CK" --step 0 --sample 60 --layer 1 | sed -n 2p)
s0b=$("$BIN" inspect "$CK" --step 0 --sample 60 --layer 1 | sed -n 2p)
s500=$("$BIN" inspect "$CK" --step 500 --sample 60 --layer 1 | sed -n 2p)
[ -n "$s0" ] && [ "$s0" = "$s0b" ] || fail "a step's sample with one seed is not repeatable ('$s0' vs '$s0b')"
[ "$s0" != "$s500" ] || fail "the samples at steps 0 and 500 are the same: '$s0'"

# bad input: exit 2, one line saying what to change
bad "does not exist" "$OUT/none.safetensors"
bad "outside the time-lapse (steps 0 to 500" "$CK" --step 9999
bad "the model has layers 1 to 1" "$CK" --layer 2
bad "the model has heads 1 to 1" "$CK" --head 3
bad "no character of the corpus" "$CK" --probe "ééé"
# layers and heads are numbered from 1: 0 is out of range, not "all"; an empty number is no number
bad "--layer 0 is out of range: the model has layers 1 to 1" "$CK" --layer 0
bad "--head 0 is out of range: the model has heads 1 to 1" "$CK" --head 0
bad "--step: needs a number (got '')" "$CK" --step ''
# a read that fails (EIO: reading /proc/self/mem at offset 0 does) and memory that runs out: one line, exit 2, no abort
bad "cannot read checkpoint '/proc/self/mem': Input/output error" /proc/self/mem
truncate -s 4G "$OUT/huge.safetensors"
if ! grep -q __asan_init "$BIN"; then  # (a sanitizer build reserves terabytes of address space: no ulimit -v there)
    out=$( (ulimit -v 400000; "$BIN" inspect "$OUT/huge.safetensors" --list) 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] && [ "$out" = "error: not enough memory for '$OUT/huge.safetensors'" ] ||
        fail "inspect of a 4 GiB file under ulimit -v: want exit 2 and 'not enough memory' (got $rc: $out)"
fi
rm -f "$OUT/huge.safetensors"
"$BIN" --headless --quiet --data "$CORPUS" --preset bigram --max-iters 10 --sample-chars 0 --eval-iters 1 \
    --save "$OUT/bigram.safetensors" >/dev/null 2>&1 || fail "bigram training failed"
bad "the bigram model has no attention" "$OUT/bigram.safetensors" --head 1
# the default probe is a whole line of the validation split; newlines in a header are written as \n
"$BIN" inspect "$OUT/bigram.safetensors" --list | head -1 | grep -qF 'a time-lapse of the probe "' ||
    fail "the bigram's --list has no probe header"
"$BIN" inspect "$OUT/bigram.safetensors" --step 10 --probe "To be or" | grep -qx 'probe (8 characters): "To be or"' ||
    fail "the bigram's recorded step 10 does not replay another text"
"$BIN" inspect "$OUT/bigram.safetensors" --step 10 | tail -1 | grep -qx "mean attention entropy: n/a" ||
    fail "the bigram's inspect should end with the entropy n/a"
echo PASS
