#!/usr/bin/env bash
# The window never destroys a file it did not make, and never says "saved" when it did not (io/files.h):
# Ctrl+S to a checkpoint name that became the corpus (a hard link or a symlink made while the window runs) is
# refused and the corpus kept; an autosave the window offered but could not load (over this driver's limits) is set
# aside before the fresh run's autosave; a screenshot on a full disk is an error, not "wrote".
# Usage: app_files_test.sh ATTNLAB CORPUS  (0 pass, 1 fail, 77 skip)
set -u
BIN=$(realpath "${1:?usage: $0 attnlab corpus}")
CORPUS=$(realpath "${2:?usage: $0 attnlab corpus}")
. "$(dirname "$0")/window_session.sh"

# a screenshot that cannot be written (a file size limit, SIGXFSZ ignored: as a full disk) is said, exit 2, no file
shot_dir=$(mktemp -d)
need_tools xvfb-run
( cd "$shot_dir" && timeout 300 xvfb-run -a -s "-screen 0 1280x800x24" bash -c 'trap "" XFSZ; ulimit -f 8; exec "$0" "$@"' \
      "$BIN" --data "$CORPUS" --preset bigram --eval-iters 2 --sample-chars 0 --exit-after-steps 2 --screenshot shot.png \
      >out.txt 2>err.txt ); rc=$?
if [ $rc -ne 2 ] || ! grep -q "cannot write the screenshot" "$shot_dir/err.txt" || grep -q "^wrote" "$shot_dir/out.txt" ||
   [ -e "$shot_dir/shot.png" ] || [ -e "$shot_dir/shot.png.layout" ]; then
    echo "FAIL: a screenshot on a full disk: exit $rc (wanted 2), files: $(ls "$shot_dir")"
    cat "$shot_dir/out.txt" "$shot_dir/err.txt"
    rm -rf "$shot_dir"
    exit 1
fi
rm -rf "$shot_dir"
echo "screenshot on a full disk: exit 2, no file, said so"

window_session 300 "" '
    cp "$CORPUS" c.txt
    CORPUS=$work/c.txt
    corpus_sum=$(md5sum < c.txt)

    # --- Ctrl+S to a name that is now the corpus ---
    start one.out --eval-interval 100 --autosave 0 --checkpoint "$work/ck.safetensors"
    wait_steps 20 || fail "the window did not train"
    ln c.txt ck.safetensors
    key ctrl+s
    wait_for one.out "^attnlab: error: save failed: cannot write the checkpoint to .*ck.safetensors.*it is the corpus" 30 ||
        fail "Ctrl+S to a hard link of the corpus was not refused"
    [ "$(md5sum < c.txt)" = "$corpus_sum" ] || fail "the corpus changed"
    rm ck.safetensors
    save_checkpoint one.out   # the name, a file of its own again, saves
    rm ck.safetensors
    ln -s c.txt ck.safetensors
    key ctrl+s
    for ((i = 0; i < 300; i++)); do [ "$(grep -c "save failed" one.out)" -ge 2 ] && break; sleep 0.1; done
    [ "$(grep -c "save failed: .*it is the corpus" one.out)" -eq 2 ] || fail "Ctrl+S to a symlink to the corpus was not refused"
    [ "$(md5sum < c.txt)" = "$corpus_sum" ] || fail "the corpus changed"
    [ -L ck.safetensors ] || fail "the symlink was replaced"
    close_window
    echo "Ctrl+S: refused over a hard link and a symlink to the corpus, the corpus intact"

    # --- an autosave offered but over this driver'"'"'s limits: set aside, never overwritten on quit ---
    "$BIN" --headless --quiet --data "$CORPUS" --preset bigram --max-iters 5 --eval-iters 2 --sample-chars 0 \
        --save attnlab_autosave.safetensors >/dev/null 2>&1 || fail "the headless run failed"
    python3 - <<"EOF" || fail "could not craft the autosave"
import json, struct
p = "attnlab_autosave.safetensors"
b = open(p, "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n]); data = b[8 + n:]
cfg = json.loads(h["__metadata__"]["config"])
cfg["batch_size"] = 4096; cfg["block_size"] = 16  # 65536 rows: more than a CPU driver takes (a GPU run, say)
h["__metadata__"]["config"] = json.dumps(cfg)
h["__metadata__"]["checksum"] = "0" * 16
s = json.dumps(h, separators=(",", ":"))
s += " " * (-len(s) % 8)
def fnv(x, v):
    for c in x: v = ((v ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return v
hl = struct.pack("<Q", len(s))
v = fnv(data, fnv(s.encode(), fnv(hl, 0xcbf29ce484222325)))
s = s.replace("0" * 16, "%016x" % v, 1)
open(p, "wb").write(hl + s.encode() + data)
EOF
    offered=$(md5sum < attnlab_autosave.safetensors)
    start two.out --eval-interval 100 --autosave 0.05
    wait_for two.out "^attnlab: attnlab_autosave.safetensors holds a run of step 5: resume it" 30 || fail "the autosave was not offered"
    key Return
    wait_for two.out "^attnlab: error: load failed: .*the file is kept as attnlab_autosave.set-aside-[0-9-]+.safetensors" 30 ||
        fail "the autosave that failed to load was not set aside"
    kept=$(grep -oE "attnlab_autosave.set-aside-[0-9-]+.safetensors" two.out | head -1)
    wait_steps 30 || fail "the fresh run did not train"
    close_window
    grep -q "^attnlab: autosaved step" two.out || fail "the fresh run did not autosave on quit"
    [ "$(md5sum < "$kept")" = "$offered" ] || fail "the set-aside file $kept is not the autosave offered"
    echo "an autosave that failed to load: kept as $kept, the fresh run autosaved anew"
'
