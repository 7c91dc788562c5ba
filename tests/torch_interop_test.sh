#!/usr/bin/env bash
# A checkpoint Attention Lab writes in PyTorch's format (engine/io/torch_pickle.h) is read by PyTorch itself:
# torch.load gives the tensors, the tied lm_head sharing wte's storage, and the plain values; pickle.load reads the
# meta.pkl. Then a nanoGPT checkpoint made by the project's PyTorch reference (bench/reference.py) goes through
# `attnlab import nanogpt` and `attnlab export nanogpt` and comes back to PyTorch as nanoGPT's train.py resumes it:
# the same logits, and its AdamW state loads into configure_optimizers' two groups and takes a step. Last, a small
# model's head scores and ablated losses, recomputed by PyTorch (bench/reference.py circuits) to 1e-5.
# Skipped (77) without Debian's python3-torch (bash bench/setup_pytorch.sh installs it).
# Usage: torch_interop_test.sh PATH/TO/attn_tests PATH/TO/attnlab
set -u
TESTS=${1:?usage: $0 attn_tests attnlab}
APP=${2:?usage: $0 attn_tests attnlab}
HERE=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 -c "import torch" 2>/dev/null || { echo "SKIP: python3-torch is not installed"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ATTN_EXPORT_PATH=$dir/ckpt.pt "$TESTS" "[.torch-export]" >"$dir/out" 2>&1 || { cat "$dir/out"; echo "FAIL: writing"; exit 1; }
/usr/bin/python3 - "$dir/ckpt.pt" <<'PY'
import pickle, sys, torch
ck = torch.load(sys.argv[1], map_location="cpu")
m = ck["model"]
wte = m["transformer.wte.weight"]
assert wte.dtype == torch.float32 and tuple(wte.shape) == (5, 8), wte.shape
assert torch.equal(wte, torch.arange(40, dtype=torch.float32).reshape(5, 8) * 0.01), wte
assert torch.equal(m["transformer.wpe.weight"], 1.0 - torch.arange(64, dtype=torch.float32).reshape(8, 8) * 0.5)
assert m["lm_head.weight"].data_ptr() == wte.data_ptr(), "lm_head is not tied to wte"
a = ck["model_args"]
assert a == {"n_layer": 1, "n_head": 2, "n_embd": 8, "block_size": 8, "bias": False, "vocab_size": 5, "dropout": 0.2}, a
assert ck["iter_num"] == 5000
assert ck["best_val_loss"].dim() == 0 and abs(ck["best_val_loss"].item() - 1.4697) < 1e-6
assert ck["config"] == {"dataset": "shakespeare_char", "betas": (0.9, 0.99)}, ck["config"]
meta = pickle.load(open(sys.argv[1] + ".meta.pkl", "rb"))
assert meta == {"vocab_size": 5, "stoi": {"a": 2, "\n": 0}}, meta
print("torch.load read the checkpoint: tensors, tied lm_head, model_args, iter_num, best_val_loss; pickle.load the meta")
PY

for f in nanogpt_step.pt nanogpt_step_bias.pt; do
    "$APP" import nanogpt "$HERE/fixtures/$f" --meta "$HERE/fixtures/meta.pkl" -o "$dir/run.safetensors" >"$dir/out" 2>&1 ||
        { cat "$dir/out"; echo "FAIL: import $f"; exit 1; }
    "$APP" export nanogpt "$dir/run.safetensors" -o "$dir/out_dir" --force >"$dir/out" 2>&1 || { cat "$dir/out"; echo "FAIL: export $f"; exit 1; }
    "$APP" export nanogpt "$dir/run.safetensors" -o "$dir/mask_dir" --force --mask-buffers >"$dir/out" 2>&1 ||
        { cat "$dir/out"; echo "FAIL: export --mask-buffers $f"; exit 1; }
    /usr/bin/python3 - "$HERE/fixtures/$f" "$dir/out_dir/ckpt.pt" "$HERE/../bench" "$dir/mask_dir/ckpt.pt" <<'PY' || { echo "FAIL: $f back in PyTorch"; exit 1; }
import sys, torch
sys.path.insert(0, sys.argv[3])
import reference
# model.py's two attention paths: flash (PyTorch >= 2.0) has no mask buffer; without it (Debian's 1.13) each block
# has attn.bias, and the strict load wants it: the plain export loads into the first, --mask-buffers into the second
orig, ock = reference.load_nanogpt_checkpoint(sys.argv[1], flash=True)
back, bck = reference.load_nanogpt_checkpoint(sys.argv[2], flash=True)  # strict load_state_dict: every name, shape
masked, _ = reference.load_nanogpt_checkpoint(sys.argv[4], flash=False)
try:
    reference.load_nanogpt_checkpoint(sys.argv[2], flash=False)
    raise AssertionError("the export without --mask-buffers loaded into model.py's non-flash path")
except RuntimeError as e:
    assert "attn.bias" in str(e), e
assert torch.equal(masked.transformer.h[0].attn.bias[0, 0], torch.tril(torch.ones(8, 8)))
chk = ock["check"]
tokens = torch.tensor([ {c: i for i, c in enumerate(sorted(set(chk["text"])))}[c] for c in chk["text"]])
x = torch.stack([tokens[o:o + 8] for o in chk["offsets"]])
with torch.no_grad():
    d = (orig(x)[0] - back(x)[0]).abs().max().item()
    dm = (orig(x)[0] - masked(x)[0]).abs().max().item()
assert d == 0.0 and dm == 0.0, f"logits differ by {d} (flash), {dm} (mask buffers)"
assert back.transformer.wte.weight.data_ptr() == back.lm_head.weight.data_ptr()
opt = back.configure_optimizers(0.1, 1e-3, (0.9, 0.99))
opt.load_state_dict(bck["optimizer"])  # as train.py --init_from=resume
assert int(opt.state[back.transformer.wte.weight]["step"].item()) == bck["iter_num"] == 1
want = ock["optimizer"]["state"][0]["exp_avg"]
assert torch.equal(opt.state[back.transformer.wte.weight]["exp_avg"], want), "wte's first moment moved"
back.train()
_, loss = back(x, torch.stack([tokens[o + 1:o + 9] for o in chk["offsets"]]))
loss.backward()
opt.step()  # AdamW runs on the loaded state
assert abs(float(bck["best_val_loss"]) - float(ock["best_val_loss"])) < 1e-6 or float(ock["best_val_loss"]) >= 1e8
print(f"{sys.argv[1].split('/')[-1]}: logits equal after import + export (both attention paths); nanoGPT's optimizer resumed at step "
      f"{bck['iter_num']} and took a step (loss {loss.item():.4f})")
PY
done

# head scores and ablation: the app's numbers on a small trained model, recomputed by PyTorch (bench/reference.py)
ATTN_EXPORT_PATH=$dir/circuits.safetensors "$TESTS" "[.circuits-export]" >"$dir/out" 2>&1 ||
    { cat "$dir/out"; echo "FAIL: the circuits export"; exit 1; }
/usr/bin/python3 "$HERE/../bench/reference.py" circuits "$dir/circuits.safetensors" || { echo "FAIL: head scores or ablation differ from PyTorch"; exit 1; }
