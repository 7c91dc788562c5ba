#!/usr/bin/python3
"""bench/reference.py's `circuits` subcommand: head scores and ablation, as engine/train/head_scores.h and
ablation.h define them, recomputed with PyTorch on the lecture's modules (reference.py) from what the test export
"[.circuits-export]" holds."""
import json

import numpy as np
import torch
from torch.nn import functional as F

from reference import DEFAULTS, LanguageModel, head_size, read_safetensors

CIRCUITS_TOL = 1e-5


def pattern_score(att, pattern):
    """the share of attention on the pattern over rows i >= 1 where it marks somewhere (j <= i); att (P, P)"""
    P = att.shape[0]
    on = total = 0.0
    for i in range(1, P):
        cols = [j for j in range(i + 1) if pattern(i, j)]
        if not cols:
            continue
        on += float(att[i, cols].sum())
        total += float(att[i].sum())
    return on / total if total > 0 else float("nan")


def head_scores(att, x):
    """previous, duplicate, first, current of one head's (P, P) map on tokens x"""
    return (pattern_score(att, lambda i, j: j == i - 1),
            pattern_score(att, lambda i, j: j < i and x[j] == x[i]),
            pattern_score(att, lambda i, j: j == 0),
            pattern_score(att, lambda i, j: j == i))


def induction(att, x):
    return pattern_score(att, lambda i, j: 1 <= j < i and x[j - 1] == x[i])


def cmd_circuits(args):
    meta, T = read_safetensors(args.file)
    info = json.loads(meta["info"])
    c = dict(DEFAULTS)
    c.update(preset=info["preset"], block_size=info["block_size"], n_embd=info["n_embd"], n_head=info["n_head"],
             head_size=info["head_size"], n_layer=info["n_layer"], ffn=bool(info["ffn"]),
             residual=bool(info["residual"]), layernorm=bool(info["layernorm"]), dropout=0.0)
    m = LanguageModel(c, info["vocab_size"]).to(torch.float64)
    m.load_attnlab(T)
    m.eval()
    L, NH, hs = c["n_layer"], c["n_head"], head_size(c)
    maps = {}

    def capture(l, h):
        def hook(module, inp, out):  # the head's softmax weights, as its forward computes them
            x = inp[0]
            q, k = module.query(x), module.key(x)
            n = x.shape[1]
            wei = (q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5).masked_fill(module.tril[:n, :n] == 0, float("-inf"))
            maps[(l, h)] = F.softmax(wei, dim=-1)[0].detach().numpy()
        return hook

    handles = [head.register_forward_hook(capture(l, h)) for l, b in enumerate(m.blocks) for h, head in enumerate(b.sa.heads)]

    def attention(tokens):
        maps.clear()
        with torch.no_grad():
            m(torch.tensor([tokens], dtype=torch.long))
        return dict(maps)

    text = [int(v) for v in T["circuits.text"]]
    probes = [[int(v) for v in row] for row in T["circuits.induction"]]
    at_text = attention(text)
    at_probes = [attention(p) for p in probes]
    for hd in handles:
        hd.remove()
    ours = T["circuits.scores"].astype(np.float64)
    worst = 0.0
    ok = True
    print(f"circuits {args.file}: preset {c['preset']}, {L} layers x {NH} heads x {hs}; scores on {len(text)} "
          f"characters and {len(probes)} induction probes; tolerance {CIRCUITS_TOL:g}")
    print(f"{'head':8s} {'previous':>18s} {'duplicate':>18s} {'induction':>18s} {'first':>18s} {'current':>18s}")
    for l in range(L):
        for h in range(NH):
            prev, dup, first, cur = head_scores(at_text[(l, h)], text)
            ind = float(np.mean([induction(a[(l, h)], p) for a, p in zip(at_probes, probes)]))
            torch_s = (prev, dup, ind, first, cur)
            row = ours[l * NH + h]
            cells = []
            for o, t in zip(row, torch_s):
                d = abs(o - t) if not (np.isnan(o) and np.isnan(t)) else 0.0
                worst = max(worst, d)
                ok &= d <= CIRCUITS_TOL
                cells.append(f"{o:8.5f}/{t:8.5f}")
            print(f"L{l + 1} H{h + 1:<5d} " + " ".join(f"{x:>18s}" for x in cells))

    def probe_loss(replace=None):
        """the mean loss on the text with head (layer, head) of `ablated` replaced by `replace` (hs,) or None"""
        la, ha = info["ablated"]
        handle = None
        if replace is not None:
            rep = torch.tensor(replace, dtype=torch.float64)
            handle = m.blocks[la].sa.heads[ha].register_forward_hook(lambda mod, inp, out: rep.expand_as(out).clone())
        with torch.no_grad():
            logits, _ = m(torch.tensor([text], dtype=torch.long))
        if handle is not None:
            handle.remove()
        return float(F.cross_entropy(logits[0, :-1], torch.tensor(text[1:], dtype=torch.long)))

    la, ha = info["ablated"]
    means = T["circuits.head_means"].astype(np.float64)[la, ha * hs:(ha + 1) * hs]
    torch_losses = (probe_loss(), probe_loss(np.zeros(hs)), probe_loss(means))
    print(f"\nprobe loss with L{la + 1} H{ha + 1} knocked out (ours / PyTorch float64):")
    for name, o, t in zip(("intact", "zero", "mean"), T["circuits.losses"].astype(np.float64), torch_losses):
        d = abs(o - t)
        rel = d / max(1.0, abs(t))
        worst = max(worst, rel)
        ok &= rel <= CIRCUITS_TOL
        print(f"  {name:7s} {o:.7f} / {t:.7f}  |diff| {d:.2e}  {'ok' if rel <= CIRCUITS_TOL else 'MISMATCH'}")
    print(f"RESULT circuits={'pass' if ok else 'FAIL'} worst={worst:.2e}")
    return 0 if ok else 1


# ----------------------------------------------------------------------------------------------------------
# train: the lecture's training loop
