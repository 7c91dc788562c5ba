#!/usr/bin/python3
"""PyTorch reference for Attention Lab: the models of Karpathy's "Let's build GPT" lecture, written the
lecture's way (separate per-head key/query/value Linear layers, torch.cat of the heads), with parameter
names that map onto Attention Lab's safetensors layout; and nanoGPT's GPT (NanoGPT below: fused c_attn, exact
GELU, LayerNorm with optional bias, lm_head tied to wte), trained as nanoGPT's train.py does (AdamW with decay on
2-D tensors, betas (0.9, beta2), warm-up + cosine lr, gradient clipping) for the nanogpt-* presets.

Subcommands
  check FILE.safetensors        replay one step exported by build/attn_export_step: load the parameters and the
                                batch, run forward+backward in float64 and float32, compare the loss and every
                                gradient with Attention Lab's. Exit 0 if all agree, 1 if not.
  circuits FILE.safetensors     recompute what the test export "[.circuits-export]" holds: every head's scores
                                (previous, duplicate, induction, first, current character) from PyTorch's
                                attention, and a probe's loss with one head's output replaced by zeros and by its
                                mean (forward hooks on the lecture's Head modules, float64). Exit 0 if all agree
                                with Attention Lab's to CIRCUITS_TOL, 1 if not.
  gpt2-fixtures OUT --tokenizer DIR, llmc-read FILE random, random-gpt2 OUT --size 124M --tokenizer DIR
                                GPT-2 as Hugging Face runs it, random-weights models in its, llm.c's and nanoGPT's
                                layouts with their logits, llm.c's reader, and a random GPT-2 of a real size for
                                timings (bench/reference_gpt2.py).
  train --preset P [...]        train like the lecture's script and print, as the last line,
                                RESULT preset=P ... tokens_per_s=X val_loss=Y ...
                                tokens/s counts training steps only (get_batch + forward + backward + AdamW
                                step), the evaluations are excluded, exactly like attnlab's --metrics column.

Needs python3, torch and numpy only (bench/setup_pytorch.sh installs Debian's python3-torch).
"""
import argparse
import ctypes
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CORPUS = os.path.join(ROOT, "assets", "tinyshakespeare.txt")

# Tolerance of `check`: a value passes if |ours - float64 PyTorch| <= TOL * max(1, |float64 PyTorch|),
# i.e. absolute 1e-4 for values of magnitude <= 1, relative 1e-4 above.
TOL = 1e-4
# and, since gradients are mostly ~1e-3..1e-1 (where an absolute 1e-4 would hide a 1-10% error), a second test
# per tensor: max|ours - float64| <= SCALE_TOL * max|float64| (our float32 results are at ~1e-6 of the scale).
SCALE_TOL = 1e-3


# ----------------------------------------------------------------------------------------------------------
# configuration: the presets of engine/model/config.cpp (the lecture's stages)

PRESETS = {
    #               n_head head_size ffn   residual layernorm n_layer n_embd block batch dropout lr     max_iters
    # head_size 0: n_embd // n_head, as the lecture's Head(n_embd) and MultiHeadAttention(4, n_embd // 4)
    "bigram":       dict(bigram=True, lr=1e-2, max_iters=3000, eval_interval=300),
    "single-head":  dict(n_head=1, head_size=0),
    "multi-head":   dict(n_head=4, head_size=0),
    "feed-forward": dict(n_head=4, head_size=0, ffn=True),
    "residual":     dict(n_head=4, head_size=0, ffn=True, residual=True, n_layer=3),
    "layernorm":    dict(n_head=4, head_size=0, ffn=True, residual=True, n_layer=3, layernorm=True),
    "gpt":          dict(n_head=6, head_size=0, ffn=True, residual=True, n_layer=6, layernorm=True,
                         n_embd=384, block_size=256, batch_size=64, dropout=0.2, lr=3e-4),
    # nanoGPT: config/train_shakespeare_char.py, and its README's CPU recipe on top of it
    "nanogpt-char": dict(nanogpt=True, n_head=6, n_layer=6, n_embd=384, block_size=256, batch_size=64, dropout=0.2,
                         lr=1e-3, max_iters=5000, lr_decay_iters=5000, min_lr=1e-4, warmup_iters=100,
                         eval_interval=250, weight_decay=0.1, beta2=0.99, grad_clip=1.0),
    "nanogpt-cpu":  dict(nanogpt=True, n_head=4, n_layer=4, n_embd=128, block_size=64, batch_size=12, dropout=0.0,
                         lr=1e-3, max_iters=2000, lr_decay_iters=2000, min_lr=1e-4, warmup_iters=100,
                         eval_interval=250, eval_iters=20, weight_decay=0.1, beta2=0.99, grad_clip=1.0),
}
DEFAULTS = dict(bigram=False, n_head=1, head_size=0, ffn=False, residual=False, layernorm=False, n_layer=1,
                n_embd=32, block_size=8, batch_size=32, dropout=0.0, lr=1e-3, max_iters=5000,
                eval_interval=500, eval_iters=200, weight_decay=0.01, seed=1337,
                nanogpt=False, bias=False, beta2=0.999, grad_clip=0.0, warmup_iters=0, lr_decay_iters=0, min_lr=0.0)


def preset_config(name):
    if name not in PRESETS:
        raise SystemExit(f"unknown preset {name!r}; one of {', '.join(PRESETS)}")
    c = dict(DEFAULTS)
    c.update(PRESETS[name])
    c["preset"] = name
    return c


def head_size(c):
    return c["head_size"] if c["head_size"] > 0 else c["n_embd"] // c["n_head"]


# ----------------------------------------------------------------------------------------------------------
# the lecture's modules

class Head(nn.Module):
    """one head of self-attention"""

    def __init__(self, n_embd, hs, block_size, dropout):
        super().__init__()
        self.key = nn.Linear(n_embd, hs, bias=False)
        self.query = nn.Linear(n_embd, hs, bias=False)
        self.value = nn.Linear(n_embd, hs, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)
        q = self.query(x)
        wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        wei = self.dropout(wei)
        v = self.value(x)
        return wei @ v


class MultiHeadAttention(nn.Module):
    def __init__(self, n_embd, n_head, hs, block_size, dropout, proj):
        super().__init__()
        self.heads = nn.ModuleList([Head(n_embd, hs, block_size, dropout) for _ in range(n_head)])
        # the lecture adds the projection together with the residual connections
        self.proj = nn.Linear(n_head * hs, n_embd) if proj else None
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=-1)
        if self.proj is not None:
            out = self.dropout(self.proj(out))
        return out


class FeedForward(nn.Module):
    """lecture: Linear(C,C)+ReLU at the feed-forward stage; Linear(C,4C)+ReLU+Linear(4C,C)+Dropout with residuals"""

    def __init__(self, n_embd, residual, dropout):
        super().__init__()
        f = 4 * n_embd if residual else n_embd
        self.fc = nn.Linear(n_embd, f)
        self.proj = nn.Linear(f, n_embd) if residual else None
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        x = F.relu(self.fc(x))
        if self.proj is not None:
            x = self.proj(x)
        return self.dropout(x)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        C, hs = c["n_embd"], head_size(c)
        self.residual = c["residual"]
        self.sa = MultiHeadAttention(C, c["n_head"], hs, c["block_size"], c["dropout"], proj=c["residual"])
        self.ffwd = FeedForward(C, c["residual"], c["dropout"]) if c["ffn"] else None
        self.ln1 = nn.LayerNorm(C) if c["layernorm"] else nn.Identity()
        self.ln2 = nn.LayerNorm(C) if (c["layernorm"] and c["ffn"]) else nn.Identity()

    def forward(self, x):
        if self.residual:
            x = x + self.sa(self.ln1(x))
            if self.ffwd is not None:
                x = x + self.ffwd(self.ln2(x))
        else:
            x = self.sa(self.ln1(x))
            if self.ffwd is not None:
                x = self.ffwd(self.ln2(x))
        return x


class LanguageModel(nn.Module):
    def __init__(self, c, vocab_size):
        super().__init__()
        self.c = c
        self.bigram = c["bigram"]
        V = vocab_size
        if self.bigram:
            self.token_embedding_table = nn.Embedding(V, V)
            return
        C, hs = c["n_embd"], head_size(c)
        A = c["n_head"] * hs
        self.token_embedding_table = nn.Embedding(V, C)
        self.position_embedding_table = nn.Embedding(c["block_size"], C)
        self.blocks = nn.Sequential(*[Block(c) for _ in range(c["n_layer"])])
        self.ln_f = nn.LayerNorm(C) if c["layernorm"] else None
        D = C if (c["residual"] or c["ffn"]) else A
        self.lm_head = nn.Linear(D, V)

    def forward(self, idx, targets=None):
        if self.bigram:
            logits = self.token_embedding_table(idx)
        else:
            B, T = idx.shape
            x = self.token_embedding_table(idx) + self.position_embedding_table(torch.arange(T, device=idx.device))
            x = self.blocks(x)
            if self.ln_f is not None:
                x = self.ln_f(x)
            logits = self.lm_head(x)
        loss = None
        if targets is not None:
            B, T, V = logits.shape
            loss = F.cross_entropy(logits.view(B * T, V), targets.view(B * T))
        return logits, loss

    # ---- mapping to Attention Lab's names (sa.qkv.weight = [all queries; all keys; all values]) ----
    def attnlab_tensors(self, grad=False):
        """dict name -> tensor in Attention Lab's layout, of the parameters or (grad=True) their gradients"""
        get = (lambda p: p.grad if p.grad is not None else torch.zeros_like(p)) if grad else (lambda p: p.detach())
        out = {"token_embedding_table.weight": get(self.token_embedding_table.weight)}
        if self.bigram:
            return out
        out["position_embedding_table.weight"] = get(self.position_embedding_table.weight)
        for l, b in enumerate(self.blocks):
            pre = f"blocks.{l}."
            if isinstance(b.ln1, nn.LayerNorm):
                out[pre + "ln1.weight"], out[pre + "ln1.bias"] = get(b.ln1.weight), get(b.ln1.bias)
            heads = b.sa.heads
            out[pre + "sa.qkv.weight"] = torch.cat([get(h.query.weight) for h in heads] +
                                                   [get(h.key.weight) for h in heads] +
                                                   [get(h.value.weight) for h in heads], dim=0)
            if b.sa.proj is not None:
                out[pre + "sa.proj.weight"], out[pre + "sa.proj.bias"] = get(b.sa.proj.weight), get(b.sa.proj.bias)
            if isinstance(b.ln2, nn.LayerNorm):
                out[pre + "ln2.weight"], out[pre + "ln2.bias"] = get(b.ln2.weight), get(b.ln2.bias)
            if b.ffwd is not None:
                out[pre + "ffwd.fc.weight"], out[pre + "ffwd.fc.bias"] = get(b.ffwd.fc.weight), get(b.ffwd.fc.bias)
                if b.ffwd.proj is not None:
                    out[pre + "ffwd.proj.weight"] = get(b.ffwd.proj.weight)
                    out[pre + "ffwd.proj.bias"] = get(b.ffwd.proj.bias)
        if self.ln_f is not None:
            out["ln_f.weight"], out["ln_f.bias"] = get(self.ln_f.weight), get(self.ln_f.bias)
        out["lm_head.weight"], out["lm_head.bias"] = get(self.lm_head.weight), get(self.lm_head.bias)
        return out

    @torch.no_grad()
    def load_attnlab(self, tensors):
        """copy Attention Lab's parameters (name -> numpy array) into this model"""
        def put(p, a):
            a = torch.from_numpy(np.array(a, dtype=np.float32, copy=True))
            if tuple(p.shape) != tuple(a.shape):
                raise ValueError(f"shape mismatch: ours {tuple(a.shape)} vs PyTorch {tuple(p.shape)}")
            p.copy_(a.to(p.dtype))

        expected = set(self.attnlab_tensors().keys())
        given = {k for k in tensors if not k.split(".")[0] in ("grad", "batch", "circuits")}
        if expected != given:
            raise SystemExit(f"parameter names differ: missing {sorted(expected - given)}, extra {sorted(given - expected)}")
        put(self.token_embedding_table.weight, tensors["token_embedding_table.weight"])
        if self.bigram:
            return
        put(self.position_embedding_table.weight, tensors["position_embedding_table.weight"])
        for l, b in enumerate(self.blocks):
            pre = f"blocks.{l}."
            if isinstance(b.ln1, nn.LayerNorm):
                put(b.ln1.weight, tensors[pre + "ln1.weight"]); put(b.ln1.bias, tensors[pre + "ln1.bias"])
            qkv = tensors[pre + "sa.qkv.weight"]
            hs = b.sa.heads[0].key.weight.shape[0]
            A = hs * len(b.sa.heads)
            for h, head in enumerate(b.sa.heads):
                put(head.query.weight, qkv[h * hs:(h + 1) * hs])
                put(head.key.weight, qkv[A + h * hs:A + (h + 1) * hs])
                put(head.value.weight, qkv[2 * A + h * hs:2 * A + (h + 1) * hs])
            if b.sa.proj is not None:
                put(b.sa.proj.weight, tensors[pre + "sa.proj.weight"]); put(b.sa.proj.bias, tensors[pre + "sa.proj.bias"])
            if isinstance(b.ln2, nn.LayerNorm):
                put(b.ln2.weight, tensors[pre + "ln2.weight"]); put(b.ln2.bias, tensors[pre + "ln2.bias"])
            if b.ffwd is not None:
                put(b.ffwd.fc.weight, tensors[pre + "ffwd.fc.weight"]); put(b.ffwd.fc.bias, tensors[pre + "ffwd.fc.bias"])
                if b.ffwd.proj is not None:
                    put(b.ffwd.proj.weight, tensors[pre + "ffwd.proj.weight"])
                    put(b.ffwd.proj.bias, tensors[pre + "ffwd.proj.bias"])
        if self.ln_f is not None:
            put(self.ln_f.weight, tensors["ln_f.weight"]); put(self.ln_f.bias, tensors["ln_f.bias"])
        put(self.lm_head.weight, tensors["lm_head.weight"]); put(self.lm_head.bias, tensors["lm_head.bias"])


# nanoGPT's GPT (NanoGPT, nanogpt_lr, load_nanogpt_checkpoint): bench/reference_nanogpt.py
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_nanogpt import NanoGPT, load_nanogpt_checkpoint, nanogpt_lr  # noqa: E402,F401


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    data = memoryview(raw)[8 + n:]
    meta = header.pop("__metadata__", {})
    tensors = {}
    for name, h in header.items():
        if h["dtype"] != "F32":
            raise SystemExit(f"{name}: dtype {h['dtype']} (expected F32)")
        a, b = h["data_offsets"]
        tensors[name] = np.frombuffer(data[a:b], dtype="<f4").reshape(h["shape"])
    return meta, tensors


def cmd_check(args):
    meta, T = read_safetensors(args.file)
    if meta.get("format") != "attnlab-tensors":
        print(f"warning: format {meta.get('format')!r}, expected 'attnlab-tensors'")
    info = json.loads(meta["info"])
    c = dict(DEFAULTS)
    c.update(preset=info["preset"], bigram=bool(info["bigram"]), block_size=info["block_size"],
             n_embd=info["n_embd"], n_head=info["n_head"], head_size=info["head_size"], n_layer=info["n_layer"],
             ffn=bool(info["ffn"]), residual=bool(info["residual"]), layernorm=bool(info["layernorm"]), dropout=0.0)
    V = info["vocab_size"]
    our_loss = float(info["loss"])
    x = torch.from_numpy(T["batch.x"].astype(np.int64))
    y = torch.from_numpy(T["batch.y"].astype(np.int64))
    print(f"check {args.file}: preset {c['preset']}, V {V}, B {x.shape[0]}, T {x.shape[1]}, C {c['n_embd']}, "
          f"heads {c['n_head']}x{head_size(c)}, layers {c['n_layer']}, ffn {c['ffn']}, residual {c['residual']}, "
          f"layernorm {c['layernorm']}")
    print(f"tolerance: |ours - PyTorch float64| <= {TOL:g} * max(1, |PyTorch float64|) elementwise "
          f"(absolute {TOL:g} for |value| <= 1, relative {TOL:g} above),\n"
          f"           and per gradient tensor max|ours - float64| <= {SCALE_TOL:g} * max|float64| (rel.scale)")

    results = {}
    for dtype in (torch.float64, torch.float32):
        torch.manual_seed(0)
        m = LanguageModel(c, V).to(dtype)
        m.load_attnlab(T)
        m.train()  # dropout is 0: train/eval identical
        m.zero_grad(set_to_none=True)
        _, loss = m(x, y)
        loss.backward()
        results[dtype] = (loss.item(), {k: v.double().numpy() for k, v in m.attnlab_tensors(grad=True).items()})

    ref_loss, ref_g = results[torch.float64]
    f32_loss, f32_g = results[torch.float32]
    ok = True

    def score(d, ref):
        return float(np.max(np.abs(d) / np.maximum(1.0, np.abs(ref)))) if d.size else 0.0

    loss_d = abs(our_loss - ref_loss)
    loss_ok = loss_d <= TOL * max(1.0, abs(ref_loss))
    ok &= loss_ok
    print(f"\nloss: ours {our_loss:.7f}  PyTorch float64 {ref_loss:.7f}  float32 {f32_loss:.7f}  "
          f"|ours-f64| {loss_d:.2e}  |f32-f64| {abs(f32_loss - ref_loss):.2e}  {'ok' if loss_ok else 'MISMATCH'}")
    print(f"\n{'gradient':40s} {'shape':>12s} {'max|g|':>10s} {'ours-f64':>10s} {'f32-f64':>10s} "
          f"{'ours-f32':>10s} {'rel.scale':>10s}  verdict")
    worst = (0.0, None)
    for name in ref_g:
        key = "grad." + name
        if key not in T:
            print(f"{name:40s} missing in the export")
            ok = False
            continue
        ours = T[key].astype(np.float64)
        ref = ref_g[name]
        if ours.shape != ref.shape:
            print(f"{name:40s} shape ours {ours.shape} vs PyTorch {ref.shape}")
            ok = False
            continue
        d64 = np.abs(ours - ref)
        d32 = np.abs(f32_g[name] - ref)
        dof = np.abs(ours - f32_g[name])
        s = score(ours - ref, ref)
        gmax = float(np.max(np.abs(ref))) if ref.size else 0.0
        rel_scale = float(d64.max()) / gmax if gmax > 0 else float(d64.max())
        good = s <= TOL and rel_scale <= SCALE_TOL
        ok &= good
        if rel_scale > worst[0]:
            worst = (rel_scale, name)
        print(f"{name:40s} {'x'.join(map(str, ref.shape)):>12s} {gmax:10.3e} {d64.max():10.2e} {d32.max():10.2e} "
              f"{dof.max():10.2e} {rel_scale:10.2e}  {'ok' if good else 'MISMATCH'}")
    print("\n(ours-f64 / f32-f64: max abs difference to PyTorch float64; rel.scale: max|ours-f64| / max|g|)")
    if worst[1] is not None:
        print(f"largest difference relative to the tensor's scale: {worst[1]} ({worst[0]:.2e})")
    print(f"RESULT check={'pass' if ok else 'FAIL'} preset={c['preset']} worst_rel_scale={worst[0]:.2e} "
          f"worst_tensor={worst[1]} loss_ours={our_loss:.7f} "
          f"loss_torch={ref_loss:.7f} max_abs_grad_diff={max(float(np.max(np.abs(T['grad.' + n].astype(np.float64) - g))) for n, g in ref_g.items() if 'grad.' + n in T):.3e}")
    return 0 if ok else 1


def cmd_train(args):
    c = preset_config(args.preset)
    for k in ("max_iters", "eval_interval", "eval_iters", "batch_size", "block_size", "n_embd", "n_head",
              "n_layer", "lr", "dropout", "seed", "weight_decay", "head_size", "beta2", "grad_clip", "warmup_iters",
              "lr_decay_iters", "min_lr"):
        v = getattr(args, k)
        if v is not None:
            c[k] = v
    if args.n_head is not None and args.head_size is None:
        c["head_size"] = 0  # as attnlab: head size derived from n_embd / n_head once n_head is given
    if not c["bigram"] and c["head_size"] == 0 and c["n_embd"] % c["n_head"] != 0:  # as attnlab's validate
        raise SystemExit("n_embd must be a multiple of n_head to split into heads of equal size")
    if not c["bigram"] and (c["residual"] or c["ffn"] or c["n_layer"] > 1) and c["n_head"] * head_size(c) != c["n_embd"]:
        raise SystemExit("n_head x head_size must equal n_embd for this preset")
    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    blas = openblas_core()
    if blas == "Prescott" and not os.environ.get("OPENBLAS_CORETYPE") and cpu_has("avx2"):
        print("warning: OpenBLAS runs its fallback SSE3 kernels (Prescott) on this CPU, which it does not recognise; "
              "its matmuls are several times faster with OPENBLAS_CORETYPE=SkylakeX (AVX-512) or Haswell (AVX2) "
              "set before starting (bench/compare_pytorch.sh chooses it)", file=sys.stderr, flush=True)
    torch.manual_seed(c["seed"])
    dev = torch.device(args.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: this PyTorch sees no CUDA GPU")

    with open(args.data, "r", encoding="utf-8") as f:
        text = f.read()
    chars = sorted(list(set(text)))
    V = len(chars)
    stoi = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)
    n = int(0.9 * len(data))
    train_data, val_data = data[:n], data[n:]
    B, Tb = c["batch_size"], c["block_size"]

    def get_batch(split):
        d = train_data if split == "train" else val_data
        ix = torch.randint(len(d) - Tb, (B,))
        x = torch.stack([d[i:i + Tb] for i in ix])
        y = torch.stack([d[i + 1:i + Tb + 1] for i in ix])
        return x.to(dev), y.to(dev)

    model = NanoGPT(c, V) if c["nanogpt"] else LanguageModel(c, V)
    if args.init == "gpt-0.02" and not c["nanogpt"]:  # the lecture's final gpt.py _init_weights
        for mod in model.modules():
            if isinstance(mod, (nn.Linear, nn.Embedding)):
                nn.init.normal_(mod.weight, mean=0.0, std=0.02)
                if isinstance(mod, nn.Linear) and mod.bias is not None:
                    nn.init.zeros_(mod.bias)
    model.to(dev)
    nparams = sum(p.numel() for p in model.parameters())
    if c["nanogpt"]:
        opt = model.configure_optimizers(c["weight_decay"], c["lr"], (0.9, c["beta2"]))
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=c["lr"], weight_decay=c["weight_decay"], betas=(0.9, c["beta2"]))

    @torch.no_grad()
    def estimate_loss():
        out = {}
        model.eval()
        for split in ("train", "val"):
            losses = torch.zeros(c["eval_iters"])
            for k in range(c["eval_iters"]):
                X, Y = get_batch(split)
                _, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean().item()
        model.train()
        return out

    print(f"preset {c['preset']}: {nparams} parameters, B {B}, T {Tb}, C {c['n_embd']}, heads {c['n_head']}x"
          f"{head_size(c) if not c['bigram'] else 0}, layers {c['n_layer']}, dropout {c['dropout']}, lr {c['lr']}, "
          f"threads {torch.get_num_threads()}, device {dev}"
          f"{' (' + torch.cuda.get_device_name(dev) + ')' if dev.type == 'cuda' else ''}, torch {torch.__version__}", flush=True)
    metrics = open(args.metrics, "w") if args.metrics else None
    if metrics:
        metrics.write("step,train_loss,val_loss,tokens_per_s\n")
    total_s, total_tokens = 0.0, 0
    since_s, since_tokens, last_tps = 0.0, 0, 0.0
    losses = {"train": float("nan"), "val": float("nan")}
    for it in range(c["max_iters"] + 1):
        if it % c["eval_interval"] == 0 or it == c["max_iters"]:
            losses = estimate_loss()
            if since_tokens > 0:
                last_tps = since_tokens / since_s
            if not args.quiet:
                print(f"step {it}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}"
                      + (f" | {last_tps:.0f} tokens/s" if last_tps > 0 else ""), flush=True)
            if metrics:
                metrics.write(f"{it},{losses['train']},{losses['val']},{last_tps}\n")
                metrics.flush()
            since_s, since_tokens = 0.0, 0
        if it == c["max_iters"]:
            break
        t0 = time.perf_counter()
        for g in opt.param_groups:  # nanoGPT's schedule (constant for the lecture's presets)
            g["lr"] = nanogpt_lr(c, it)
        xb, yb = get_batch("train")
        _, loss = model(xb, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if c["grad_clip"] > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), c["grad_clip"])
        opt.step()
        lv = loss.item()  # synchronises, as attnlab's step returns its loss
        dt = time.perf_counter() - t0
        since_s += dt
        total_s += dt
        since_tokens += B * Tb
        total_tokens += B * Tb
        if not math.isfinite(lv):
            raise SystemExit(f"training diverged at step {it}")
    if metrics:
        metrics.close()
    tps = total_tokens / total_s if total_s > 0 else 0.0
    print(f"RESULT preset={c['preset']} steps={c['max_iters']} threads={torch.get_num_threads()} "
          f"tokens_per_s={tps:.1f} ms_per_step={1e3 * total_s / max(1, c['max_iters']):.3f} "
          f"train_loss={losses['train']:.4f} val_loss={losses['val']:.4f} train_seconds={total_s:.2f} "
          f"blas={blas or 'unknown'}", flush=True)
    return 0


def openblas_core():
    """The kernel set OpenBLAS chose (its openblas_get_corename), or None when PyTorch's BLAS is not OpenBLAS.
    "Prescott" is its SSE3 fallback for CPUs it does not recognise (Debian bookworm's 0.3.21 on newer Xeons)."""
    try:
        with open("/proc/self/maps") as f:
            libs = sorted({line.split()[-1] for line in f if "openblas" in line and line.split()[-1].startswith("/")})
        for path in libs:
            fn = getattr(ctypes.CDLL(path), "openblas_get_corename", None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    except OSError:
        pass
    return None


def cpu_has(flag):
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and flag in line.split() for line in f)
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("check", help="compare one exported step (attn_export_step) with PyTorch")
    p.add_argument("file")
    p = sub.add_parser("circuits", help="recompute exported head scores and ablated losses ([.circuits-export])")
    p.add_argument("file")
    p = sub.add_parser("train", help="train a preset the lecture's way and report tokens/s and val loss")
    p.add_argument("--preset", required=True, choices=list(PRESETS))
    p.add_argument("--data", default=DEFAULT_CORPUS)
    for k, t in (("max-iters", int), ("eval-interval", int), ("eval-iters", int), ("batch-size", int),
                 ("block-size", int), ("n-embd", int), ("n-head", int), ("n-layer", int), ("head-size", int),
                 ("lr", float), ("dropout", float), ("weight-decay", float), ("seed", int), ("beta2", float),
                 ("grad-clip", float), ("warmup-iters", int), ("lr-decay-iters", int), ("min-lr", float)):
        p.add_argument("--" + k, type=t, default=None)
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda: where PyTorch trains")
    p.add_argument("--init", choices=("torch-default", "gpt-0.02"), default="torch-default",
                   help="torch-default (as Attention Lab and the lecture's intermediate stages) or gpt-0.02 "
                        "(the final gpt.py's normal(0, 0.02) init)")
    p.add_argument("--metrics", help="write step,train_loss,val_loss,tokens_per_s to this CSV (as attnlab)")
    p.add_argument("--quiet", action="store_true", help="print only the RESULT line")
    p = sub.add_parser("gpt2-fixtures", help="random-weights GPT-2 in Hugging Face's, llm.c's and nanoGPT's layouts, "
                                             "with their logits (bench/reference_gpt2.py)")
    p.add_argument("out")
    p.add_argument("--tokenizer", required=True, help="GPT-2's encoder.json + vocab.bpe folder (assets/gpt2)")
    p = sub.add_parser("llmc-read", help="read an llm.c checkpoint as llm.c does and compare with the fixtures' model")
    p.add_argument("file")
    p.add_argument("against", choices=("random",))
    p = sub.add_parser("random-gpt2", help="a random-weights GPT-2 of one of its sizes in Hugging Face's layout")
    p.add_argument("out")
    p.add_argument("--size", default="124M", choices=("124M", "350M", "774M", "1558M"))
    p.add_argument("--tokenizer", required=True, help="GPT-2's encoder.json + vocab.bpe folder (assets/gpt2)")
    args = ap.parse_args()
    if args.cmd in ("gpt2-fixtures", "llmc-read", "random-gpt2"):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import reference_gpt2  # (bench/reference_gpt2.py)
        sys.exit({"gpt2-fixtures": reference_gpt2.cmd_fixtures, "llmc-read": reference_gpt2.cmd_llmc_read,
                  "random-gpt2": reference_gpt2.cmd_random_gpt2}[args.cmd](args))
    if args.cmd == "circuits":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from reference_circuits import cmd_circuits  # (bench/reference_circuits.py)
        sys.exit(cmd_circuits(args))
    sys.exit({"check": cmd_check, "train": cmd_train}[args.cmd](args))


if __name__ == "__main__":
    main()
