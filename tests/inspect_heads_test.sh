#!/usr/bin/env bash
# `attnlab inspect FILE --heads`: one line per head (layer and head from 1; previous, duplicate, induction, first,
# current, entropy, label) and the strongest induction head, at a recorded step or at the checkpoint's weights (the
# same numbers at the last step); the induction preset trains on its generated corpus without --data, and inspect
# finds that corpus again from the checkpoint; bad input exits 2 with one line.
# Usage: inspect_heads_test.sh PATH/TO/attnlab PATH/TO/corpus.txt   (exit 0 pass, 1 fail)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
. "$(dirname "$0")/inspect_lib.sh"  # fail, bad
CK=$OUT/ind.safetensors

"$BIN" --headless --quiet --preset induction --max-iters 40 --eval-interval 20 --eval-iters 2 --batch-size 4 \
    --sample-chars 0 --save "$CK" >"$OUT/train.out" 2>&1 || { cat "$OUT/train.out"; fail "training the induction preset failed"; }
grep -q "^corpus: induction (" "$OUT/train.out" || { cat "$OUT/train.out"; fail "the induction preset did not train on the induction corpus"; }

"$BIN" inspect "$CK" --heads --step 0 >"$OUT/h0" 2>&1 || { cat "$OUT/h0"; fail "--heads --step 0 failed"; }
cat "$OUT/h0"
grep -q "head scores at step 0 " "$OUT/h0" || fail "--heads --step 0 does not say its step"
num='[0-9]+\.[0-9]{3}'
for l in 1 2; do
    for h in 1 2 3 4; do
        grep -qE "^L$l H$h +$num +$num +$num +$num +$num +[0-9]+\.[0-9]{4} +[+-][0-9]+\.[0-9]{4}  [a-z -]+$" "$OUT/h0" ||
            fail "no scores for L$l H$h"
    done
done
[ "$(grep -cE '^L[0-9]+ H[0-9]+ ' "$OUT/h0")" -eq 8 ] || fail "not one line per head (2 layers x 4 heads)"
tail -1 "$OUT/h0" | grep -qE "^strongest induction head: L[12] H[1-4] score $num$" || fail "no strongest induction head line"
grep -q "^importance: the validation loss's increase with the head alone knocked out" "$OUT/h0" || fail "importance is not said"
# every score is a share of attention: from 0 to 1
awk '/^L[0-9]+ H[0-9]+ / { for (i = 3; i <= 7; i++) if ($i < 0 || $i > 1) exit 1 }' "$OUT/h0" || fail "a score outside [0, 1]"

# the checkpoint's weights are those of its last step: computed anew, the numbers of --step 40
"$BIN" inspect "$CK" --heads | tail -n +2 >"$OUT/anew" || fail "--heads at the checkpoint's weights failed"
"$BIN" inspect "$CK" --heads --step 40 | tail -n +2 >"$OUT/recorded"
diff "$OUT/anew" "$OUT/recorded" || fail "--heads at the checkpoint's weights differs from --step 40"
"$BIN" inspect "$CK" --heads --probe "abcabc" | grep -q 'on "abcabc" (6 characters)' || fail "--heads does not use --probe"

bad "outside the time-lapse (steps 0 to 40" "$CK" --heads --step 9999
bad "leave out --list, --layer, --head, --sample, --ablate and --icl" "$CK" --heads --list
bad "leave out --list, --layer, --head, --sample, --ablate and --icl" "$CK" --heads --layer 1
bad "leave out --list, --layer, --head, --sample, --ablate and --icl" "$CK" --heads --ablate 1:1
BG=$OUT/bigram.safetensors
"$BIN" --headless --quiet --data "$CORPUS" --preset bigram --max-iters 2 --eval-interval 2 --eval-iters 1 \
    --sample-chars 0 --save "$BG" >/dev/null 2>&1 || fail "training the bigram failed"
bad "the bigram model has no attention" "$BG" --heads
bad "the generated corpus is 'induction' or 'induction:SEED'" "$CK" --heads --data induction:x
echo "PASS: inspect --heads"
