#!/usr/bin/env bash
# Faults during a headless run, made real with --inject-fault: a NaN in the weights (the GPU's own NaN/Inf check
# must catch it), VK_ERROR_OUT_OF_DEVICE_MEMORY and VK_ERROR_DEVICE_LOST. Each ends with exit code 2 and one line
# saying what happened, and the checkpoint of the last evaluation stays good: resuming it reaches the uninterrupted
# run's losses. Also the flag's own validation and the window-only flags' (--autosave, --checkpoint).
# Usage: fault_test.sh ATTNLAB CORPUS
set -u
bin=$1 corpus=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
run=(--headless --quiet --data "$corpus" --preset bigram --eval-interval 10 --eval-iters 2 --sample-chars 0)

# the uninterrupted run, for comparison
"$bin" "${run[@]}" --max-iters 40 >"$tmp/straight.txt" 2>/dev/null || fail "the uninterrupted run failed"
step40() { grep '^step 40:' "$1" | cut -d'|' -f1; }

# fault KIND EXPECTED-LINE: the run stops at step 25 with exactly that stderr line (after the device line), exit 2;
# its checkpoint (step 20) resumes and reaches the uninterrupted run's step-40 losses.
fault() {
    local kind=$1 want=$2 ck="$tmp/$1.safetensors" out rc
    out=$("$bin" "${run[@]}" --max-iters 40 --save "$ck" --inject-fault "$kind@25" 2>&1 >"$tmp/$kind.txt"); rc=$?
    out=$(printf '%s\n' "$out" | grep -v '^device:')
    if [ $rc -ne 2 ] || [ "$out" != "$want" ]; then
        fail "--inject-fault $kind@25: exit $rc, wanted 2 and the line"; echo "  wanted: $want"; echo "  got:    $out"
    elif grep -q '^step 30:' "$tmp/$kind.txt"; then
        fail "--inject-fault $kind@25: training went on past the fault"
    else
        passes=$((passes+1))
    fi
    "$bin" "${run[@]}" --max-iters 40 --resume "$ck" >"$tmp/$kind.resumed.txt" 2>&1; rc=$?
    if [ $rc -eq 0 ] && grep -q "^resumed $ck at step 20$" "$tmp/$kind.resumed.txt" &&
       [ -n "$(step40 "$tmp/straight.txt")" ] && [ "$(step40 "$tmp/$kind.resumed.txt")" = "$(step40 "$tmp/straight.txt")" ]; then
        passes=$((passes+1))
    else
        fail "the checkpoint left by $kind@25 should resume at step 20 and reach the uninterrupted step-40 losses (exit $rc)"
        cat "$tmp/$kind.resumed.txt"
    fi
}
fault nan "error: training diverged at step 25 (the loss is NaN or Inf): lower --lr (now 0.01); the checkpoint of step 20 in $tmp/nan.safetensors is from before: --resume $tmp/nan.safetensors --lr LOWER continues it"
fault oom "error: the GPU ran out of memory (VK_ERROR_OUT_OF_DEVICE_MEMORY in vkQueueSubmit (--inject-fault oom@25)): try a smaller batch size, block size or model; the checkpoint of step 20 is in $tmp/oom.safetensors: --resume $tmp/oom.safetensors continues"
fault device-lost "error: the GPU device was lost (VK_ERROR_DEVICE_LOST in vkQueueSubmit (--inject-fault device-lost@25); a driver reset or crash); the checkpoint of step 20 is in $tmp/device-lost.safetensors: --resume $tmp/device-lost.safetensors continues"

# without --save there is nothing to point to: the message says how to keep checkpoints
out=$("$bin" "${run[@]}" --max-iters 40 --inject-fault device-lost@5 2>&1 >/dev/null); rc=$?
if [ $rc -eq 2 ] && grep -q "VK_ERROR_DEVICE_LOST.*; use --save FILE to keep checkpoints$" <<<"$out"; then
    passes=$((passes+1))
else
    fail "device-lost without --save: exit $rc: $out"
fi

# bad values: exit 2 and one line naming the flag
bad() {  # bad "substring" args...
    local want=$1 out rc lines; shift
    out=$("$bin" "$@" 2>&1 >/dev/null); rc=$?
    lines=$(printf '%s\n' "$out" | grep -c .)
    if [ $rc -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$want" <<<"$out"; then
        fail "attnlab $* -> exit $rc, wanted 2 and one line with '$want': $out"
    else
        passes=$((passes+1))
    fi
}
for v in nan@0 nan@-3 nan@ @5 nan nan@abc nan@1e3 nan@99999999999 inf@5 oom@100000001; do
    bad "--inject-fault must be KIND@STEP" --headless --data "$corpus" --inject-fault "$v"
done
# --autosave and --checkpoint are checked before any window opens
for v in -1 nan inf 1e30 525601; do bad "--autosave must be a number of minutes" --data "$corpus" --autosave "$v"; done
bad "--autosave" --data "$corpus" --autosave abc
bad "--checkpoint needs a file name" --data "$corpus" --checkpoint ""
bad "--autosave and --checkpoint are for the window" --headless --data "$corpus" --autosave 1
bad "--autosave and --checkpoint are for the window" --headless --data "$corpus" --checkpoint x.safetensors

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
