#!/usr/bin/env bash
# GPT-2's runs made elsewhere, in: bench/reference.py gpt2-fixtures writes one random-weights GPT-2 in Hugging Face's
# layout (F32 with the mask buffers; GPT2LMHeadModel's names in F16), in llm.c's .bin (fp32 and bf16) and as nanoGPT's
# ckpt.pt without meta.pkl (vocabulary padded to 50304), each with PyTorch's logits on a fixed token sequence. Each
# imports with `attnlab import`, and its logits here equal PyTorch's to 1e-4 (with --block-size 16 too, on its 16). Then out: `attnlab export llmc` is read
# back by llm.c's reader (bench/reference_gpt2.py) as the same weights, export -> import -> export gives the same
# bytes, and `attnlab export nanogpt` of the nanoGPT run loads into PyTorch as the weights it came from.
# Skipped (77) without Debian's python3-torch or GPT-2's tokenizer files (scripts/setup.sh fetches them).
# Usage: gpt2_import_test.sh PATH/TO/attn_tests PATH/TO/attnlab GPT2_DIR
set -u
TESTS=${1:?usage: $0 attn_tests attnlab GPT2_DIR}
APP=${2:?usage: $0 attn_tests attnlab GPT2_DIR}
GPT2=${3:?usage: $0 attn_tests attnlab GPT2_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 -c "import torch, numpy" 2>/dev/null || { echo "SKIP: python3-torch is not installed"; exit 77; }
[ -f "$GPT2/encoder.json" ] && [ -f "$GPT2/vocab.bpe" ] || { echo "SKIP: no GPT-2 tokenizer files in $GPT2"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; [ -f "$dir/out" ] && cat "$dir/out"; exit 1; }
/usr/bin/python3 "$HERE/../bench/reference.py" gpt2-fixtures "$dir/fx" --tokenizer "$GPT2" || fail "writing the fixtures"
tokens=$(cat "$dir/fx/tokens.txt")

# logits of RUN (an attnlab checkpoint) against PyTorch's NAME.logits, on the first P tokens (default: all 32)
logits_equal() {
    local P=${3:-32}
    ATTN_RUN=$1 ATTN_TOKENS=$(echo "$tokens" | cut -d, -f1-"$P") ATTN_LOGITS_OUT=$dir/ours.logits "$TESTS" "[.gpt2-logits]" \
        >"$dir/out" 2>&1 || fail "computing the logits of $1"
    /usr/bin/python3 - "$dir/ours.logits" "$dir/fx/$2.logits" "$2" "$P" <<'PY' || fail "logits of $2"
import sys
import numpy as np
P = int(sys.argv[4])
ours, want = np.fromfile(sys.argv[1], dtype=np.float32), np.fromfile(sys.argv[2], dtype=np.float32)[:P * 50257]
assert ours.shape == want.shape, (ours.shape, want.shape)
d = float(np.abs(ours - want).max())
print(f"{sys.argv[3]}: logits ({P} x 50257) within {d:.2e} of PyTorch's (spread {float(want.std()):.2f})")
assert d <= 1e-4, d
PY
}

"$APP" import gpt2 "$dir/fx/hf" -o "$dir/hf.safetensors" >"$dir/out" 2>&1 || fail "import gpt2 folder"
grep -q "50257 byte-level BPE tokens" "$dir/out" || fail "import gpt2 says its tokens"
logits_equal "$dir/hf.safetensors" hf
# A device that binds 1 MiB a tensor (lavapipe binds 128 MiB, GPT-2 small's embedding is 148): the token embedding,
# the logits and the parameters (6 MB each here) are cut into ranges; the same logits, and inspect prints the same
for i in $(seq 1 60); do echo "The quick brown fox jumps over the lazy dog $i times."; done >"$dir/small.txt"
inspect() { "$APP" inspect "$dir/hf.safetensors" --data "$dir/small.txt" --probe "The quick brown fox" --heads; }
inspect >"$dir/whole.txt" 2>&1 || { cat "$dir/whole.txt"; fail "inspect"; }
export ATTNLAB_MAX_BINDING_KIB=1024
echo "with a binding limit of 1 MiB:"
logits_equal "$dir/hf.safetensors" hf
inspect >"$dir/ranges.txt" 2>&1 || { cat "$dir/ranges.txt"; fail "inspect under a 1 MiB binding limit"; }
unset ATTNLAB_MAX_BINDING_KIB
cmp -s "$dir/whole.txt" "$dir/ranges.txt" || { diff "$dir/whole.txt" "$dir/ranges.txt" | head; fail "inspect differs in ranges"; }
echo "inspect --heads under a 1 MiB binding limit: the same output"
# --block-size: the first positions kept, the logits there the same
"$APP" import gpt2 "$dir/fx/hf" --block-size 16 -o "$dir/hf16.safetensors" >"$dir/out" 2>&1 || fail "import gpt2 --block-size 16"
grep -q "block 16" "$dir/out" || fail "import --block-size 16 says its block"
logits_equal "$dir/hf16.safetensors" hf 16
"$APP" import gpt2 "$dir/fx/hf_lm/model.safetensors" -o "$dir/hf_lm.safetensors" >"$dir/out" 2>&1 || fail "import gpt2 file"
logits_equal "$dir/hf_lm.safetensors" hf_lm
for f in llmc llmc_bf16; do
    "$APP" import llmc "$dir/fx/$f.bin" --tokenizer "$GPT2" -o "$dir/$f.safetensors" >"$dir/out" 2>&1 || fail "import llmc $f"
    logits_equal "$dir/$f.safetensors" $f
done
"$APP" import nanogpt "$dir/fx/nanogpt/ckpt.pt" --tokenizer "$GPT2" -o "$dir/nanogpt.safetensors" >"$dir/out" 2>&1 ||
    fail "import nanogpt with --tokenizer"
grep -q "47 padding rows" "$dir/out" || fail "import nanogpt names the padding rows it dropped"
logits_equal "$dir/nanogpt.safetensors" nanogpt

# out to llm.c, read as llm.c reads it; again through import: the same bytes
"$APP" export llmc "$dir/hf.safetensors" -o "$dir/out1.bin" >"$dir/out" 2>&1 || fail "export llmc"
/usr/bin/python3 "$HERE/../bench/reference.py" llmc-read "$dir/out1.bin" random || fail "llm.c's reader"
"$APP" import llmc "$dir/out1.bin" --tokenizer "$GPT2" -o "$dir/back.safetensors" >"$dir/out" 2>&1 || fail "import the export"
"$APP" export llmc "$dir/back.safetensors" -o "$dir/out2.bin" >"$dir/out" 2>&1 || fail "export again"
cmp -s "$dir/out1.bin" "$dir/out2.bin" || fail "export -> import -> export changed the weights"
echo "export llmc -> import llmc -> export llmc: the same bytes"
# nanoGPT's exact GELU is not llm.c's tanh form: refused with one line
"$APP" export llmc "$dir/nanogpt.safetensors" -o "$dir/x.bin" >"$dir/out" 2>&1 && fail "exporting an exact-GELU run to llm.c"
grep -q "exact GELU" "$dir/out" && [ "$(wc -l <"$dir/out")" -eq 1 ] || fail "the refusal is one line"
# out to nanoGPT: ckpt.pt without meta.pkl, the weights it came from (the padding rows dropped)
"$APP" export nanogpt "$dir/nanogpt.safetensors" -o "$dir/ng" >"$dir/out" 2>&1 || fail "export nanogpt"
[ ! -e "$dir/ng/meta.pkl" ] || fail "a run of GPT-2's tokens got a meta.pkl"
/usr/bin/python3 - "$dir/fx/nanogpt/ckpt.pt" "$dir/ng/ckpt.pt" <<'PY' || fail "the nanoGPT export in PyTorch"
import sys, torch
a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2])
assert b["model_args"]["vocab_size"] == 50257 and b["model_args"]["bias"] is True, b["model_args"]
for k, v in a["model"].items():
    w = b["model"][k]
    assert torch.equal(v[:50257] if k in ("transformer.wte.weight", "lm_head.weight") else v, w), k
print("export nanogpt: torch.load gives the imported weights (GPT-2's 50257 rows), no meta.pkl")
PY
# a run without its tokenizer: one line naming --tokenizer
rm "$dir/fx/hf/vocab.json"
"$APP" import gpt2 "$dir/fx/hf" -o "$dir/x.safetensors" >"$dir/out" 2>&1 && fail "import without a tokenizer"
grep -q "give --tokenizer" "$dir/out" || fail "the missing tokenizer is named"
"$APP" import nanogpt "$dir/fx/nanogpt/ckpt.pt" -o "$dir/x.safetensors" >"$dir/out" 2>&1 && fail "GPT-2's vocabulary without --tokenizer"
grep -q -- "--tokenizer assets/gpt2 -o" "$dir/out" || fail "nanogpt import names --tokenizer"
echo "PASS"
