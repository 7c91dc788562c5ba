#!/usr/bin/env bash
# Every file the headless trainer writes or reads back: never over the corpus or the last good checkpoint, never
# "saved" when it was not (io/files.h). Usage: files_test.sh ATTNLAB CORPUS   (exit 0 pass, 1 fail)
set -u
bin=$(realpath "$1") corpus=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fails=0 passes=0
ok() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run=(--headless --quiet --preset bigram --eval-iters 2 --sample-chars 0)

# a closed stderr and a signal during saves: the checkpoint left is whole (resumable), never the signal's message
# (fds 0-2 are reopened on /dev/null; what is written is read back before it replaces the file)
cp "$corpus" c.txt
for i in 1 2 3 4 5 6; do
    rm -f ck.safetensors
    ( exec 2>&-; exec "$bin" "${run[@]}" --data c.txt --max-iters 100000 --eval-interval 1 --save ck.safetensors >/dev/null ) &
    pid=$!
    for _ in $(seq 100); do [ -f ck.safetensors ] && break; sleep 0.05; done
    sleep 0.$((RANDOM % 10))
    kill -TERM $pid; wait $pid
    if ! "$bin" inspect ck.safetensors --list >/dev/null 2>err.txt; then
        fail "try $i: the checkpoint saved with stderr closed does not load: $(cat err.txt)"; break
    fi
    ! grep -aq "stopping after the batch" ck.safetensors || { fail "try $i: the signal's message is inside the checkpoint"; break; }
done
[ $fails -eq 0 ] && ok

# a symlink planted at the name an older build used for its temporary file (FILE.tmp.PID) clobbers nothing
cp "$corpus" victim.txt
before=$(md5sum < victim.txt)
( ln -s victim.txt "ck2.safetensors.tmp.$BASHPID"; exec "$bin" "${run[@]}" --data c.txt --max-iters 2 --save ck2.safetensors >/dev/null 2>&1 )
[ "$(md5sum < victim.txt)" = "$before" ] && ok || fail "a planted symlink at ck2.safetensors.tmp.PID let the save overwrite its target"
"$bin" inspect ck2.safetensors --list >/dev/null 2>&1 && ok || fail "the save beside a planted symlink did not give a loadable checkpoint"

# --metrics that cannot be written is an error (exit 2), never an empty file and exit 0
"$bin" "${run[@]}" --data c.txt --max-iters 2 --metrics /dev/full >/dev/null 2>err.txt; rc=$?
[ $rc -eq 2 ] && grep -q "metrics" err.txt && ok || fail "--metrics /dev/full: exit $rc (wanted 2): $(cat err.txt)"
# a full disk part-way: the rows are not silently lost (a file-size limit, SIGXFSZ ignored, as on a full disk)
( trap '' XFSZ; ulimit -f 1; exec "$bin" "${run[@]}" --data c.txt --max-iters 400 --eval-interval 5 --metrics full.csv >/dev/null 2>err.txt ); rc=$?
[ $rc -eq 2 ] && grep -q "cannot write the --metrics file" err.txt && ok || fail "--metrics on a full disk: exit $rc (wanted 2): $(cat err.txt)"
# a symlink to the checkpoint: refused, the checkpoint kept
"$bin" "${run[@]}" --data c.txt --max-iters 2 --save keep.safetensors >/dev/null 2>&1
ln -s keep.safetensors m.csv
"$bin" "${run[@]}" --data c.txt --max-iters 2 --save keep.safetensors --metrics m.csv >/dev/null 2>err.txt; rc=$?
[ $rc -eq 2 ] && grep -q "same file" err.txt && "$bin" inspect keep.safetensors --list >/dev/null 2>&1 && ok ||
    fail "--metrics through a symlink to the --save checkpoint: exit $rc (wanted 2): $(cat err.txt)"
# with stdout closed, the console's lines never land in the CSV
"$bin" --headless --preset bigram --eval-iters 2 --sample-chars 50 --data c.txt --max-iters 4 --eval-interval 2 --metrics out.csv >&- 2>/dev/null
bad=$(grep -cvE '^(step,train_loss,val_loss,tokens_per_s|[0-9]+,[0-9.e+-]+,[0-9.e+-]+,[0-9.e+-]*)$' out.csv)
[ "$bad" = 0 ] && [ "$(wc -l < out.csv)" = 4 ] && ok || { fail "with stdout closed the CSV holds other lines:"; cat out.csv; }

# --screenshot naming the corpus (a hard link to it, or a corpus called .png) is refused before anything runs
ln c.txt hard.png
"$bin" --data c.txt --screenshot hard.png >/dev/null 2>err.txt; rc=$?
[ $rc -eq 2 ] && grep -q "would overwrite the corpus" err.txt && cmp -s c.txt "$corpus" && ok ||
    fail "--screenshot over a hard link of the corpus: exit $rc: $(cat err.txt)"
# --checkpoint (the window's Ctrl+S file) naming the corpus through a symlink: refused too
ln -s c.txt ck-link.safetensors
"$bin" --data c.txt --checkpoint ck-link.safetensors >/dev/null 2>err.txt; rc=$?
[ $rc -eq 2 ] && grep -q "would overwrite the corpus" err.txt && ok || fail "--checkpoint through a symlink to the corpus: exit $rc: $(cat err.txt)"

# a legal name of 252 characters saves (the temporary file's name is short)
long=$(printf 'n%.0s' $(seq 240)).safetensors
"$bin" "${run[@]}" --data c.txt --max-iters 3 --eval-interval 1 --save "$long" >/dev/null 2>err.txt; rc=$?
[ $rc -eq 0 ] && "$bin" inspect "$long" --list >/dev/null 2>&1 && ok || fail "--save with a 252-character name: exit $rc: $(cat err.txt)"

# a corpus larger than this device's largest tensor: refused before training with what helps (not batch size)
limit=134217728  # lavapipe's maxStorageBufferRange (2^27); a GPU's larger limit skips this case
chars=$((limit / 4 + 1000))
head -c "$chars" /dev/zero | tr '\0' 'a' > big.txt; printf 'b\n' >> big.txt
if [ "$chars" -le 100000000 ]; then
    start=$(date +%s)
    "$bin" "${run[@]}" --data big.txt --max-iters 1 >/dev/null 2>err.txt; rc=$?
    [ $rc -eq 2 ] && grep -q "characters" err.txt && ! grep -q "batch" err.txt && ok ||
        fail "a corpus over the tensor limit: exit $rc, wanted 2 and what helps: $(cat err.txt)"
fi
rm -f big.txt
# one byte over 100 MiB says so in bytes (not "100 MiB, more than the 100 MiB limit")
truncate -s $((100 * 1048576 + 1)) over.txt
"$bin" "${run[@]}" --data over.txt >/dev/null 2>err.txt
grep -q "is 104857601 bytes, more than the limit of 100 MiB" err.txt && ok || fail "100 MiB + 1 byte: $(cat err.txt)"
rm -f over.txt

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
