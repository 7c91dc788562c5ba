#!/usr/bin/env bash
# nanoGPT's checkpoints on the command line: `attnlab import nanogpt`, `--resume ckpt.pt`, `attnlab export nanogpt`,
# and their refusals (exit 2, one line). Usage: nanogpt_cli_test.sh ATTNLAB CORPUS
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") corpus=$2
fix=$(cd "$(dirname "$0")/fixtures" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
ok() { passes=$((passes+1)); }
bad() { echo "FAIL: $*"; fails=$((fails+1)); }
refused() {  # refused "substring" args...: exit 2 and one line on stderr that holds the substring
    local want=$1; shift
    local out rc; out=$("$bin" "$@" 2>&1 >/dev/null); rc=$?
    if [ "$rc" -eq 2 ] && grep -qF -- "$want" <<<"$out" && [ "$(grep -v '^device:' <<<"$out" | grep -c .)" -eq 1 ]; then ok
    else bad "attnlab $* -> exit $rc, wanted 2 and '$want':"; echo "$out"; fi
}
# a corpus of the fixtures' five characters (meta.pkl: newline, space, a, b, e-acute)
for i in $(seq 60); do printf 'ab a\nb\xc3\xa9 ba\xc3\xa9 a b\n'; done > "$tmp/five.txt"
train() { "$bin" --headless --quiet --data "$tmp/five.txt" --eval-interval 2 --eval-iters 1 --sample-chars 20 "$@" 2>&1; }

# import, then train on: the step counts on from the optimizer's
out=$("$bin" import nanogpt "$fix/nanogpt_step.pt" --meta "$fix/meta.pkl" -o "$tmp/run.safetensors" 2>&1) && ok ||
    bad "import: $out"
grep -q "at step 1 -> " <<<"$out" && ok || bad "import should report step 1: $out"
out=$(train --resume "$tmp/run.safetensors" --max-iters 3 --batch-size 4) && ok || bad "training the imported run: $out"
grep -q "^step 3: train loss" <<<"$out" && ok || bad "the imported run should reach step 3: $out"
# --resume of the ckpt.pt itself (meta.pkl beside it), with a note saying where the characters came from
out=$(train --resume "$fix/nanogpt_step_bias.pt" --max-iters 2 --batch-size 4) && ok || bad "--resume ckpt.pt: $out"
grep -q "note: .*characters from .*meta.pkl" <<<"$out" && ok || bad "--resume ckpt.pt should say where its characters came from: $out"
grep -q "^step 2: train loss" <<<"$out" && ok || bad "--resume ckpt.pt should train to step 2: $out"
# a checkpoint alone (no meta.pkl) trains on a corpus of its vocabulary's size, and says so
cp "$fix/nanogpt_step.pt" "$tmp/alone.pt"
out=$(train --resume "$tmp/alone.pt" --max-iters 2 --batch-size 4) && ok || bad "--resume without meta.pkl: $out"
grep -q "sorted, as nanoGPT's prepare.py" <<<"$out" && ok || bad "the vocabulary's origin should be said: $out"
refused "cannot be shown as characters" --headless --resume "$tmp/alone.pt" --data "$corpus" --max-iters 2

# export, and import what was exported: the same weights (inspect prints the same predictions)
"$bin" export nanogpt "$tmp/run.safetensors" -o "$tmp/out" >/dev/null 2>&1 && ok || bad "export"
[ -s "$tmp/out/ckpt.pt" ] && [ -s "$tmp/out/meta.pkl" ] && ok || bad "export should write ckpt.pt and meta.pkl"
"$bin" import nanogpt "$tmp/out/ckpt.pt" -o "$tmp/back.safetensors" >/dev/null 2>&1 && ok || bad "import of the export"
a=$("$bin" inspect "$tmp/run.safetensors" --data "$tmp/five.txt" 2>&1 | grep -v "^device" | tail -n +2)  # not the name
b=$("$bin" inspect "$tmp/back.safetensors" --data "$tmp/five.txt" 2>&1 | grep -v "^device" | tail -n +2)
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "export + import should give back the same model: $(diff <(echo "$a") <(echo "$b") | head)"
# an imported run names no corpus (nanoGPT's checkpoint records none): inspect without --data takes the default
# corpus, never the checkpoint's own bytes, and says which characters it lacks
refused "different vocabulary (5 characters; this corpus has 65)" inspect "$tmp/run.safetensors"

# refusals
out=$("$bin" --headless --quiet --data "$corpus" --max-iters 1 --eval-iters 1 --sample-chars 0 \
      --save "$tmp/lecture.safetensors" 2>&1)
grep -q "^step 1: train loss" <<<"$out" && ! grep -q "grad norm" <<<"$out" && ok ||
    bad "no grad norm without clipping: $out"
refused "only nanoGPT's GPT can be exported" export nanogpt "$tmp/lecture.safetensors" -o "$tmp/x"
refused "unknown format 'onnx': attnlab import knows nanogpt, gpt2 and llmc" import onnx "$fix/nanogpt_step.pt" -o "$tmp/y.safetensors"
refused "unknown format 'gpt2': attnlab export knows nanogpt and llmc" export gpt2 "$tmp/lecture.safetensors" -o "$tmp/y"
refused "is not Hugging Face's GPT-2 safetensors" import gpt2 "$fix/nanogpt_step.pt" -o "$tmp/y.safetensors"
refused "--meta is for nanoGPT's checkpoints" import llmc "$fix/nanogpt_step.pt" --meta "$fix/meta.pkl" -o "$tmp/y.safetensors"
refused "llm.c runs GPT-2" export llmc "$tmp/lecture.safetensors" -o "$tmp/y.bin"
head -c 3000 "$fix/nanogpt_step.pt" > "$tmp/truncated.pt"
refused "truncated.pt" import nanogpt "$tmp/truncated.pt" --meta "$fix/meta.pkl" -o "$tmp/t.safetensors"
refused "truncated.pt" --headless --resume "$tmp/truncated.pt" --data "$tmp/five.txt"
# a zip entry that claims 4 GiB in a 21 KiB file (found by fuzz_nanogpt): refused, nothing that size allocated
limit=2000000  # (a sanitizer build reserves terabytes of address space: no ulimit -v there)
grep -q __asan_init "$bin" && limit=unlimited
out=$( (ulimit -v $limit; "$bin" import nanogpt "$fix/size_lie.pt" --meta "$fix/meta.pkl" -o "$tmp/s.safetensors") 2>&1)
[ $? -eq 2 ] && grep -qE "is damaged|is compressed" <<<"$out" && ok || bad "size_lie.pt: $out"
printf 'PK\003\004 not really a zip' > "$tmp/junk.pt"
refused "junk.pt" import nanogpt "$tmp/junk.pt" --meta "$fix/meta.pkl" -o "$tmp/j.safetensors"
cd "$tmp"  # where evil.pt's command would leave its file
refused "nothing was run" import nanogpt "$fix/evil.pt" --meta "$fix/meta.pkl" -o "$tmp/e.safetensors"
cd - >/dev/null
[ ! -e "$tmp/attnlab_pwned" ] && ok || bad "evil.pt ran its command"
refused "not a nanoGPT checkpoint" import nanogpt "$fix/views.pt" --meta "$fix/meta.pkl" -o "$tmp/v.safetensors"
refused "views.pt" import nanogpt "$fix/nanogpt_step.pt" --meta "$fix/views.pt" -o "$tmp/m.safetensors"
refused "--bias is nanoGPT's switch" --headless --data "$corpus" --preset layernorm --bias off
[ ! -e "$tmp/t.safetensors" ] && [ ! -e "$tmp/j.safetensors" ] && ok || bad "a refused import should write nothing"

# the presets train (a few steps, the small one)
out=$("$bin" --headless --quiet --data "$corpus" --preset nanogpt-cpu --max-iters 2 --eval-interval 2 --eval-iters 1 \
      --sample-chars 0 --save "$tmp/cpu.safetensors" 2>&1) && ok || bad "nanogpt-cpu: $out"
grep -q "nanoGPT: 4 layers x 4 heads x 32, n_embd 128, block 64" <<<"$out" && ok || bad "nanogpt-cpu's model: $out"
# it clips at 1.0: the evaluation line ends with the last update's gradient norm
grep -qE "^step 2: train loss .* MiB \| grad norm [0-9]+\.[0-9]{3}$" <<<"$out" && ok ||
    bad "nanogpt-cpu's grad norm: $out"
# its round trip through nanoGPT's files: the import finds meta.pkl beside ckpt.pt, and the imported run inspects
# without --data (tiny Shakespeare, the default corpus, has its 65 characters)
"$bin" export nanogpt "$tmp/cpu.safetensors" -o "$tmp/cpuout" >/dev/null 2>&1 && ok || bad "export of nanogpt-cpu"
out=$("$bin" import nanogpt "$tmp/cpuout/ckpt.pt" -o "$tmp/cpuback.safetensors" 2>&1) && ok || bad "import: $out"
grep -q "note: characters from .*cpuout/meta.pkl" <<<"$out" && ok ||
    bad "the import should take meta.pkl beside it: $out"
out=$("$bin" inspect "$tmp/cpuback.safetensors" 2>&1) && ok || bad "inspect of the imported run without --data: $out"
grep -qE "^probe \([0-9]+ characters\)" <<<"$out" && ok || bad "inspect should show a probe of the default corpus: $out"
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
