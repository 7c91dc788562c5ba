#!/usr/bin/env bash
# `attnlab inspect --ablate` and `--icl`: a headless residual run's heads knocked out (zero and mean ablation) change
# the validation loss and say by how much; the loss by position and the in-context learning score at every recorded
# step; bad head lists, modes and models exit 2 with one line.
# Usage: circuits_cli_test.sh PATH/TO/attnlab PATH/TO/corpus.txt   (exit 0 pass, 1 fail)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
. "$(dirname "$0")/inspect_lib.sh"  # fail, bad
CK=$OUT/run.safetensors
"$BIN" --headless --quiet --data "$CORPUS" --preset residual --max-iters 300 --eval-interval 100 --eval-iters 5 \
    --sample-chars 0 --save "$CK" >"$OUT/train.out" 2>&1 || { cat "$OUT/train.out"; fail "training failed"; }

# zero ablation at the checkpoint's weights: per-character losses, then the validation loss intact and ablated
"$BIN" inspect "$CK" --ablate 1:2,2:1 >"$OUT/zero" 2>&1 || { cat "$OUT/zero"; fail "--ablate failed"; }
cat "$OUT/zero"
grep -qx "knocked out: L1 H2, L2 H1 (zero ablation: each head's output replaced by 0)" "$OUT/zero" || fail "the heads are not named"
last=$(tail -1 "$OUT/zero")
[[ "$last" =~ ^ablated\ val\ loss:\ ([0-9.]+)\ \(([+-][0-9.]+)\)$ ]] || fail "--ablate should end 'ablated val loss: X (+D)' (got: $last)"
[ "${BASH_REMATCH[2]}" != "+0.0000" ] || fail "knocking out two heads changed nothing"
intact=$(sed -nE 's/^val loss on 5 fixed validation batches of 32: intact ([0-9.]+)$/\1/p' "$OUT/zero")
[ -n "$intact" ] || fail "no intact validation loss on fixed batches"
# mean ablation at a recorded step: its own weights, the same fixed batches
"$BIN" inspect "$CK" --ablate 3:4 --ablation mean --step 100 >"$OUT/mean" 2>&1 || { cat "$OUT/mean"; fail "--ablation mean failed"; }
grep -q "at the weights recorded at step 100" "$OUT/mean" || fail "--step 100 is not used"
grep -q "(mean ablation: each head's output replaced by its mean over the validation batches)" "$OUT/mean" || fail "mean ablation is not said"
tail -1 "$OUT/mean" | grep -qE "^ablated val loss: [0-9.]+ \([+-][0-9.]+\)$" || fail "mean ablation: no ablated val loss"
! grep -q "intact $intact\$" "$OUT/mean" || fail "step 100 and step 300 have the same validation loss"

# in-context learning: a row for each recorded step, then the score
"$BIN" inspect "$CK" --icl >"$OUT/icl" 2>&1 || { cat "$OUT/icl"; fail "--icl failed"; }
rows=$(grep -cE "^ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[+-][0-9.]+$" "$OUT/icl")
n=$("$BIN" inspect "$CK" --list | grep -cE "^ +[0-9]+ ")
[ "$rows" -eq "$n" ] && [ "$n" -gt 20 ] || fail "--icl: $rows rows for $n recorded steps"
tail -1 "$OUT/icl" | grep -qE "^in-context learning score: -?[0-9.]+$" || fail "--icl should end with the score"

bad "no head given" "$CK" --ablate ""
bad "head 4:1 is out of range: the model has layers 1 to 3 and heads 1 to 4" "$CK" --ablate 4:1
bad "'x' is not a head" "$CK" --ablate 1:1,x
bad "--ablation half: zero" "$CK" --ablate 1:1 --ablation half
bad "outside the time-lapse" "$CK" --ablate 1:1 --step 9999
bad "ask for one at a time" "$CK" --ablate 1:1 --icl
# a model with no bias after its first layer's heads cannot be mean-ablated there, and says what to do
"$BIN" --headless --quiet --data "$CORPUS" --preset single-head --n-layer 2 --max-iters 5 --eval-iters 1 \
    --sample-chars 0 --save "$OUT/two.safetensors" >/dev/null 2>&1 || fail "two-layer single-head training failed"
bad "use zero ablation" "$OUT/two.safetensors" --ablate 1:1 --ablation mean
"$BIN" inspect "$OUT/two.safetensors" --ablate 2:1 --ablation mean >/dev/null 2>&1 || fail "the last layer's head folds into lm_head's bias"
"$BIN" --headless --quiet --data "$CORPUS" --preset bigram --max-iters 5 --eval-iters 1 --sample-chars 0 \
    --save "$OUT/bigram.safetensors" >/dev/null 2>&1 || fail "bigram training failed"
bad "the bigram model has no attention" "$OUT/bigram.safetensors" --ablate 1:1
echo PASS
