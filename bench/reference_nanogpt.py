#!/usr/bin/python3
"""nanoGPT's GPT for bench/reference.py (which re-exports these names): the model, its learning-rate schedule and
its checkpoint loader."""
import math

import torch
import torch.nn as nn
from torch.nn import functional as F

# nanoGPT's GPT, from the description of its model.py: pre-LayerNorm blocks, one fused c_attn (rows q, k, v), c_proj,
# MLP c_fc -> exact GELU -> c_proj, ln_f, lm_head tied to wte, every bias present or absent together (`bias`).
# Its state_dict names are nanoGPT's (and Attention Lab's Config::nanogpt layout).

class NanoLayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class NanoAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        C = c["n_embd"]
        self.n_head = c["n_head"]
        self.c_attn = nn.Linear(C, 3 * C, bias=c["bias"])
        self.c_proj = nn.Linear(C, C, bias=c["bias"])
        self.attn_dropout = nn.Dropout(c["dropout"])
        self.resid_dropout = nn.Dropout(c["dropout"])
        self.causal = True
        # as model.py: without flash attention (PyTorch < 2.0) the causal mask is a buffer, "attn.bias" in the state
        # dict, which its strict load_state_dict then wants; c["flash"] picks either path on any PyTorch
        self.flash = c.get("flash")
        if self.flash is None:
            self.flash = hasattr(F, "scaled_dot_product_attention")
        if not self.flash:
            T = c["block_size"]
            self.register_buffer("bias", torch.tril(torch.ones(T, T)).view(1, 1, T, T))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
        if self.flash:
            mask = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device))
        else:
            mask = self.bias[:, :, :T, :T] != 0
        att = att.masked_fill(~mask, float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class NanoMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        C = c["n_embd"]
        self.c_fc = nn.Linear(C, 4 * C, bias=c["bias"])
        self.gelu = nn.GELU()  # exact (erf), as nanoGPT
        self.c_proj = nn.Linear(4 * C, C, bias=c["bias"])
        self.dropout = nn.Dropout(c["dropout"])

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class NanoBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = NanoLayerNorm(c["n_embd"], c["bias"])
        self.attn = NanoAttention(c)
        self.ln_2 = NanoLayerNorm(c["n_embd"], c["bias"])
        self.mlp = NanoMLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class NanoGPT(nn.Module):
    def __init__(self, c, vocab_size):
        super().__init__()
        self.c = c
        C = c["n_embd"]
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, C), wpe=nn.Embedding(c["block_size"], C), drop=nn.Dropout(c["dropout"]),
            h=nn.ModuleList([NanoBlock(c) for _ in range(c["n_layer"])]), ln_f=NanoLayerNorm(C, c["bias"])))
        self.lm_head = nn.Linear(C, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied
        for mod in self.modules():
            if isinstance(mod, (nn.Linear, nn.Embedding)):
                nn.init.normal_(mod.weight, mean=0.0, std=0.02)
                if isinstance(mod, nn.Linear) and mod.bias is not None:
                    nn.init.zeros_(mod.bias)
        for pn, p in self.named_parameters():  # the residual projections, scaled by depth
            if pn.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c["n_layer"]))

    def forward(self, idx, targets=None):
        B, T = idx.shape
        pos = torch.arange(T, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1), ignore_index=-1)
        return logits, loss

    def configure_optimizers(self, weight_decay, lr, betas):
        """AdamW with weight decay on the 2-D tensors only (matmul weights, embeddings), as nanoGPT's"""
        params = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        groups = [{"params": [p for p in params.values() if p.dim() >= 2], "weight_decay": weight_decay},
                  {"params": [p for p in params.values() if p.dim() < 2], "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=lr, betas=betas)


def nanogpt_lr(c, it):
    """nanoGPT's get_lr: linear warm-up, cosine decay to min_lr, then min_lr"""
    if c["warmup_iters"] <= 0 and c["lr_decay_iters"] <= 0:
        return c["lr"]
    if it < c["warmup_iters"]:
        return c["lr"] * (it + 1) / (c["warmup_iters"] + 1)
    if c["lr_decay_iters"] <= 0:
        return c["lr"]
    if it > c["lr_decay_iters"]:
        return c["min_lr"]
    ratio = (it - c["warmup_iters"]) / max(1, c["lr_decay_iters"] - c["warmup_iters"])
    return c["min_lr"] + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (c["lr"] - c["min_lr"])


def load_nanogpt_checkpoint(path, device="cpu", flash=None):
    """(model, checkpoint) as nanoGPT's train.py --init_from=resume loads them: model_args, the state dict with
    torch.compile's prefix stripped (strict), and an optimizer from configure_optimizers with the saved state.
    flash: model.py's attention path (None: what this PyTorch has; False wants the attn.bias buffers)"""
    ckpt = torch.load(path, map_location=device)
    a = ckpt["model_args"]
    from reference import DEFAULTS  # (at call time: reference.py imports this module)
    c = dict(DEFAULTS)
    c.update(nanogpt=True, n_layer=a["n_layer"], n_head=a["n_head"], n_embd=a["n_embd"], block_size=a["block_size"],
             bias=a["bias"], dropout=a["dropout"], flash=flash)
    model = NanoGPT(c, a["vocab_size"])
    sd = {k[len("_orig_mod."):] if k.startswith("_orig_mod.") else k: v for k, v in ckpt["model"].items()}
    model.load_state_dict(sd)
    return model, ckpt


# ----------------------------------------------------------------------------------------------------------
# check: replay one exported step
