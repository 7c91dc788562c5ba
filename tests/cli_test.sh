#!/usr/bin/env bash
# Bad command-line input: exit code 2 and one line that names the problem. Usage: cli_test.sh ATTNLAB CORPUS
set -u
bin=$1 corpus=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
expect() {  # expect CODE "substring" args...
    local code=$1 want=$2; shift 2
    local out rc
    out=$(env ${EXTRA_ENV:-} "$bin" --headless --quiet "$@" 2>&1 >/dev/null); rc=$?
    local lines; lines=$(printf '%s\n' "$out" | grep -v '^device:' | grep -c .)
    if [ "$rc" -ne "$code" ] || ! grep -qF -- "$want" <<<"$out" || { [ "$code" -eq 2 ] && [ "$lines" -ne 1 ]; }; then
        echo "FAIL: attnlab $* -> exit $rc, wanted $code and '$want'; stderr:"; echo "$out"; fails=$((fails+1))
    else
        passes=$((passes+1))
    fi
}
printf 'ab\0cd' > "$tmp/binary.txt"
: > "$tmp/empty.txt"
printf 'caf\xe9 au lait\n' > "$tmp/latin1.txt"
printf 'abcdefghij\n' > "$tmp/short.txt"
expect 2 "does not exist" --data "$tmp/missing.txt"
expect 2 "is a directory" --data "$tmp"
expect 2 "is empty" --data "$tmp/empty.txt"
expect 2 "looks binary" --data "$tmp/binary.txt"
expect 2 "not valid UTF-8" --data "$tmp/latin1.txt"
expect 2 "too short for block size 8" --data "$tmp/short.txt"
expect 2 "--lr" --data "$corpus" --lr nan
expect 2 "--lr" --data "$corpus" --lr -1
expect 2 "--lr" --data "$corpus" --lr abc
expect 2 "--batch-size" --data "$corpus" --batch-size 0
expect 2 "--block-size" --data "$corpus" --block-size 99999999
expect 2 "--max-iters" --data "$corpus" --max-iters -5
expect 2 "--eval-iters" --data "$corpus" --eval-iters 0
expect 2 "--temperature" --data "$corpus" --temperature 0
expect 2 "unknown --preset" --preset gpt5
expect 2 "--device 7 does not exist" --data "$corpus" --device 7
EXTRA_ENV="VK_ICD_FILENAMES=/nonexistent/icd.json VK_DRIVER_FILES=/nonexistent/icd.json" expect 2 "mesa-vulkan-drivers" --data "$corpus"
# a tiny real run: prints the lecture's lines and a sample, exit 0
out=$("$bin" --headless --quiet --data "$corpus" --preset bigram --max-iters 20 --eval-interval 10 --eval-iters 2 --sample-chars 30 2>/dev/null); rc=$?
if [ $rc -eq 0 ] && grep -qE '^step 20: train loss [0-9]+\.[0-9]{4}, val loss [0-9]+\.[0-9]{4}' <<<"$out" && grep -q -- '--- sample' <<<"$out"; then
    passes=$((passes+1))
else
    echo "FAIL: short bigram run (exit $rc):"; echo "$out"; fails=$((fails+1))
fi
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
