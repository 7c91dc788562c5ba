#!/usr/bin/env bash
# A checkpoint Attention Lab writes in PyTorch's format (engine/io/torch_pickle.h) is read by PyTorch itself:
# torch.load gives the tensors, the tied lm_head sharing wte's storage, and the plain values; pickle.load reads the
# meta.pkl. Skipped (77) without Debian's python3-torch (bash bench/setup_pytorch.sh installs it).
# Usage: torch_interop_test.sh PATH/TO/attn_tests
set -u
TESTS=${1:?usage: $0 attn_tests}
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
