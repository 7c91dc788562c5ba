#!/usr/bin/env bash
# nanoGPT checkpoints under attack (tests/fixtures/make_hostile.py makes them at test time): `import nanogpt`,
# `inspect` and `--resume` refuse each with exit 2 and one line, within 2 s and 200 MiB of address space; and the
# writers never replace what the command reads (import's corpus, meta.pkl, the default corpus; --save and --metrics
# over the meta.pkl beside a resumed ckpt.pt) nor an export's existing files without --force.
# Usage: hostile_cli_test.sh PATH/TO/attnlab CORPUS
set -u
APP=$(cd "$(dirname "${1:?usage: $0 attnlab corpus}")" && pwd)/$(basename "$1")
CORPUS=$(cd "$(dirname "${2:?usage: $0 attnlab corpus}")" && pwd)/$(basename "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
# 200 MiB of address space, 2 s; a sanitizer build (CI's) reserves terabytes of address space and runs several
# times slower: there no ulimit -v, and 10 s
LIMIT=204800 MS=2000
grep -q __asan_init "$APP" && LIMIT=unlimited MS=10000
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
python3 "$HERE/fixtures/make_hostile.py" "$dir" >/dev/null || { echo "FAIL: make_hostile.py"; exit 1; }
cp "$HERE/fixtures/meta.pkl" "$dir/meta.pkl"
cd "$dir"

# refused LABEL CMD...: exit 2, one line on stderr starting "error: ", within 2 s and 200 MiB of address space.
# VULKAN=1: the refusal comes after the GPU is opened (no address-space limit, 60 s). Notes may come first.
refused() {
    local label=$1
    shift
    local start end rc
    start=$(date +%s%N)
    if [ -n "${VULKAN:-}" ]; then
        timeout 60 "$@" >out.txt 2>all.txt
        rc=$?
    else
        (ulimit -v $LIMIT; timeout 20 "$@" >out.txt 2>all.txt)
        rc=$?
    fi
    grep -v '^attnlab: note: \|^device: \|^attnlab: nothing to train' all.txt >err.txt  # what it says before refusing
    end=$(date +%s%N)
    local ms=$(( (end - start) / 1000000 ))
    if [ "$rc" -ne 2 ]; then fail "$label: exit $rc, not 2: $(head -c 400 err.txt)"; return; fi
    if [ "$(wc -l <err.txt)" -ne 1 ] || ! grep -q '^error: ' err.txt; then fail "$label: not one error line:"; cat err.txt; return; fi
    if [ -z "${VULKAN:-}" ] && [ "$ms" -gt "$MS" ]; then fail "$label: took $ms ms to refuse (at most $MS)"; return; fi
    echo "ok: $label ($ms ms): $(head -c 160 err.txt)"
}

# the control: the file the attacks start from imports under the same limits
(ulimit -v $LIMIT; timeout 20 "$APP" import nanogpt good.pt -o good.safetensors >out.txt 2>err.txt) ||
    fail "good.pt does not import under 200 MiB: $(cat err.txt)"

for f in hang.pt bomb.pt size_lie.pt claims.pt crc.pt overlap.pt inf.pt nan_moment.pt neg_moment.pt; do
    refused "import $f" "$APP" import nanogpt "$f" -o run.safetensors
    refused "inspect $f" "$APP" inspect "$f"
    refused "--resume $f" "$APP" --headless --resume "$f" --data "$CORPUS" --max-iters 1
    [ -e run.safetensors ] && { fail "import $f wrote run.safetensors"; rm -f run.safetensors; }
done
grep -q "archive/data/2" <("$APP" import nanogpt crc.pt -o run.safetensors 2>&1) || fail "crc.pt: the damaged entry is not named"
refused "meta.pkl with 60000 keys" "$APP" import nanogpt good.pt --meta many_keys.pkl -o run.safetensors
refused "meta.pkl of 1 MiB of integers" "$APP" import nanogpt good.pt --meta wide.pkl -o run.safetensors

# --- the writers: nothing a command reads is written over ---
sum() { sha256sum "$1" | cut -d' ' -f1; }
for i in $(seq 60); do printf 'ab a\nb\xc3\xa9 ba\n'; done >corpus.txt  # meta.pkl's 5 characters
keep_corpus=$(sum corpus.txt) keep_meta=$(sum meta.pkl)
refused "import -o over its --data" "$APP" import nanogpt good.pt --data corpus.txt -o corpus.txt
[ "$(sum corpus.txt)" = "$keep_corpus" ] || fail "import replaced its --data corpus"
refused "import -o over its --meta" "$APP" import nanogpt good.pt --meta meta.pkl -o meta.pkl
refused "import -o over the meta.pkl beside it" "$APP" import nanogpt good.pt -o meta.pkl
[ "$(sum meta.pkl)" = "$keep_meta" ] || fail "import replaced meta.pkl"
refused "import -o over the checkpoint" "$APP" import nanogpt good.pt -o good.pt
mkdir -p assets && cp corpus.txt assets/tinyshakespeare.txt
refused "import -o over the default corpus" "$APP" import nanogpt good.pt -o assets/tinyshakespeare.txt
[ "$(sum assets/tinyshakespeare.txt)" = "$keep_corpus" ] || fail "import replaced the default corpus"
rm -rf assets
refused "--resume ckpt.pt --save meta.pkl" "$APP" --headless --resume good.pt --data corpus.txt --max-iters 300 --save meta.pkl
VULKAN=1 refused "--resume ckpt.pt --metrics meta.pkl" "$APP" --headless --resume good.pt --data corpus.txt --max-iters 300 --metrics meta.pkl
[ "$(sum meta.pkl)" = "$keep_meta" ] || fail "--resume replaced the meta.pkl beside its checkpoint"

# --- export: an existing ckpt.pt or meta.pkl is replaced only with --force, never its own input, both or neither ---
"$APP" export nanogpt good.safetensors -o exp >out.txt 2>&1 || fail "export: $(cat out.txt)"
keep_pt=$(sum exp/ckpt.pt)
refused "export over an existing ckpt.pt" "$APP" export nanogpt good.safetensors -o exp
[ "$(sum exp/ckpt.pt)" = "$keep_pt" ] || fail "export replaced ckpt.pt without --force"
"$APP" export nanogpt good.safetensors -o exp --force >out.txt 2>&1 || fail "export --force: $(cat out.txt)"
keep_pt=$(sum exp/ckpt.pt)
# best_val_loss comes back: good.pt's 1.4697, through the safetensors run and the export
"$APP" import nanogpt exp/ckpt.pt -o back.safetensors >out.txt 2>&1 && grep -q "best val loss 1.4697" out.txt ||
    fail "best_val_loss was not carried through import and export: $(cat out.txt)"
refused "export over its own input" "$APP" export nanogpt exp/ckpt.pt -o exp --force
[ "$(sum exp/ckpt.pt)" = "$keep_pt" ] || fail "export replaced its own input"
rm exp/meta.pkl && mkdir exp/meta.pkl  # meta.pkl cannot be written: ckpt.pt must stay as it was
refused "export when meta.pkl cannot be written" "$APP" export nanogpt good.safetensors -o exp --force
[ "$(sum exp/ckpt.pt)" = "$keep_pt" ] || fail "export replaced ckpt.pt though meta.pkl failed"
[ -z "$(ls -A exp | grep -v '^ckpt.pt$\|^meta.pkl$')" ] || fail "export left temporary files: $(ls -A exp)"

# every file the project ships for its readers (fixtures, fuzz seeds): each command either opens it or refuses it
# with exit 2; never a signal, a crash (exit 1) or a hang
for f in "$HERE"/fixtures/* "$HERE"/fuzz/seeds/*/*; do
    case "$f" in *.py) continue ;; esac
    for cmd in "import nanogpt $f -o any.safetensors" "inspect $f" "--headless --resume $f --data corpus.txt --max-iters 1"; do
        # shellcheck disable=SC2086
        timeout 60 "$APP" $cmd >out.txt 2>err.txt
        rc=$?
        [ "$rc" -eq 0 ] || [ "$rc" -eq 2 ] || fail "attnlab $cmd: exit $rc: $(tail -c 300 err.txt)"
        rm -f any.safetensors
    done
done
echo "ok: every fixture and fuzz seed opens or is refused with exit 2"

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "hostile checkpoints: all refused; writers keep their inputs"
