#!/usr/bin/python3
"""bench/reference.py's GPT-2 subcommands: GPT-2 as Hugging Face runs it (Conv1D weights stored (in, out), GELU's
tanh form "gelu_new", tied lm_head), written from its definition with plain tensor operations, and random-weights
models in the three layouts Attention Lab imports.

  gpt2-fixtures OUT --tokenizer DIR   writes OUT/hf/ (model.safetensors of GPT2Model's names with the attention
                                      mask buffers, config.json, vocab.json + merges.txt), OUT/hf_lm/ (GPT2LMHeadModel's
                                      names and lm_head.weight, F16), OUT/llmc.bin and OUT/llmc_bf16.bin (llm.c's
                                      train_gpt2.py write_model, versions 3 and 5), OUT/nanogpt/ckpt.pt (nanoGPT's,
                                      vocabulary padded to 50304, exact GELU, no meta.pkl), OUT/tokens.txt and each
                                      one's logits on those tokens (OUT/NAME.logits: float32 (P, 50257)).
  llmc-read FILE.bin random           reads an llm.c checkpoint as llm.c's reader does (header, then every tensor in
                                      write_model's order, padding rows zero) and compares it with the fixtures'
                                      random model's weights, exactly. Exit 0 if equal, 1 if not.
"""
import json
import os
import shutil
import struct

import numpy as np
import torch
from torch.nn import functional as F

V, C, L, NH, T = 50257, 32, 2, 4, 32  # GPT-2's vocabulary; a small model
LAYER_KINDS = ["ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
               "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
               "mlp.c_proj.weight", "mlp.c_proj.bias"]
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


def random_gpt2(seed=1234):
    """a random-weights GPT-2 state dict in Hugging Face's layout (GPT2Model's names, Conv1D weights (in, out))"""
    g = torch.Generator().manual_seed(seed)
    r = lambda *s, std=0.1: torch.randn(*s, generator=g) * std  # noqa: E731
    sd = {"wte.weight": r(V, C, std=0.2), "wpe.weight": r(T, C, std=0.2)}
    for l in range(L):
        p = f"h.{l}."
        sd[p + "ln_1.weight"] = 1 + r(C)
        sd[p + "ln_1.bias"] = r(C)
        sd[p + "attn.c_attn.weight"] = r(C, 3 * C, std=0.3)
        sd[p + "attn.c_attn.bias"] = r(3 * C)
        sd[p + "attn.c_proj.weight"] = r(C, C, std=0.2)
        sd[p + "attn.c_proj.bias"] = r(C)
        sd[p + "ln_2.weight"] = 1 + r(C)
        sd[p + "ln_2.bias"] = r(C)
        sd[p + "mlp.c_fc.weight"] = r(C, 4 * C, std=0.2)
        sd[p + "mlp.c_fc.bias"] = r(4 * C)
        sd[p + "mlp.c_proj.weight"] = r(4 * C, C, std=0.1)
        sd[p + "mlp.c_proj.bias"] = r(C)
    sd["ln_f.weight"] = 1 + r(C)
    sd["ln_f.bias"] = r(C)
    return sd


def gpt2_logits(sd, idx, n_layer, n_head, gelu="tanh"):
    """Hugging Face's GPT2LMHeadModel forward in float64: idx (P,) -> logits (P, V)"""
    sd = {k: v.double() for k, v in sd.items()}
    P = idx.shape[0]
    x = sd["wte.weight"][idx] + sd["wpe.weight"][:P]
    Cw = x.shape[1]
    hs = Cw // n_head
    ln = lambda x, p: F.layer_norm(x, (Cw,), sd[p + ".weight"], sd[p + ".bias"], 1e-5)  # noqa: E731
    conv1d = lambda x, p: x @ sd[p + ".weight"] + sd[p + ".bias"]  # noqa: E731  (Conv1D: x (P, in) @ W (in, out))
    mask = torch.tril(torch.ones(P, P, dtype=torch.bool))
    for l in range(n_layer):
        p = f"h.{l}."
        q, k, v = conv1d(ln(x, p + "ln_1"), p + "attn.c_attn").split(Cw, dim=1)
        q, k, v = (t.view(P, n_head, hs).transpose(0, 1) for t in (q, k, v))  # (NH, P, HS)
        att = (q @ k.transpose(1, 2)) / hs ** 0.5
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(0, 1).reshape(P, Cw)
        x = x + conv1d(y, p + "attn.c_proj")
        h = conv1d(ln(x, p + "ln_2"), p + "mlp.c_fc")
        h = F.gelu(h, approximate=gelu)
        x = x + conv1d(h, p + "mlp.c_proj")
    x = ln(x, "ln_f")
    return x @ sd["wte.weight"].T


def write_safetensors(path, tensors, dtype=torch.float32):
    """safetensors: u64 header length, the JSON header, the tensors' bytes"""
    names = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        t = t.to(dtype).contiguous()
        b = t.view(torch.int16).numpy().tobytes() if dtype != torch.float32 else t.numpy().tobytes()
        header[name] = {"dtype": names[dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def to_llmc_order(sd):
    """nanoGPT's / llm.c's names and (out, in) layout from Hugging Face's"""
    return {"transformer." + k: (v.T.contiguous() if k.endswith(CONV1D) else v) for k, v in sd.items()}


def write_llmc(path, sd, version):
    """llm.c's train_gpt2.py write_model: header, then write_tensors (wte padded to a multiple of 128)"""
    m = to_llmc_order(sd)
    Vp = (V + 127) // 128 * 128
    header = np.zeros(256, dtype=np.int32)
    header[:8] = [20240326, version, T, V, L, NH, C, Vp]
    wte = torch.cat([m["transformer.wte.weight"], torch.zeros(Vp - V, C)])
    order = [wte, m["transformer.wpe.weight"]]
    for kind in LAYER_KINDS:
        order += [m[f"transformer.h.{l}.{kind}"] for l in range(L)]
    order += [m["transformer.ln_f.weight"], m["transformer.ln_f.bias"]]
    with open(path, "wb") as f:
        f.write(header.tobytes())
        for t in order:
            t = t.contiguous()
            f.write(t.numpy().tobytes() if version == 3 else t.to(torch.bfloat16).view(torch.int16).numpy().tobytes())


def read_llmc(path):
    """llm.c's reader: the header's sizes, then the tensors in write_model's order; returns (header, tensors by name)"""
    with open(path, "rb") as f:
        h = np.frombuffer(f.read(1024), dtype=np.int32)
        assert h[0] == 20240326 and h[1] in (3, 5), f"bad magic or version {h[:2]}"
        maxT, Vh, Lh, NHh, Ch, Vph = (int(x) for x in h[2:8])
        dt = np.float32 if h[1] == 3 else np.uint16
        data = np.frombuffer(f.read(), dtype=dt)
    if h[1] == 5:
        data = (data.astype(np.uint32) << 16).view(np.float32)
    shapes = [("wte", (Vph, Ch)), ("wpe", (maxT, Ch))]
    rows = {"ln_1.weight": (Ch,), "ln_1.bias": (Ch,), "attn.c_attn.weight": (3 * Ch, Ch), "attn.c_attn.bias": (3 * Ch,),
            "attn.c_proj.weight": (Ch, Ch), "attn.c_proj.bias": (Ch,), "ln_2.weight": (Ch,), "ln_2.bias": (Ch,),
            "mlp.c_fc.weight": (4 * Ch, Ch), "mlp.c_fc.bias": (4 * Ch,), "mlp.c_proj.weight": (Ch, 4 * Ch),
            "mlp.c_proj.bias": (Ch,)}
    for kind in LAYER_KINDS:
        shapes += [(f"h.{l}.{kind}", rows[kind]) for l in range(Lh)]
    shapes += [("ln_f.weight", (Ch,)), ("ln_f.bias", (Ch,))]
    out, pos = {}, 0
    for name, s in shapes:
        n = int(np.prod(s))
        out[name] = data[pos:pos + n].reshape(s)
        pos += n
    assert pos == data.size, f"{data.size - pos} floats past the last tensor"
    return h, out


def cmd_fixtures(args):
    out = args.out
    os.makedirs(out, exist_ok=True)
    sd = random_gpt2()
    g = torch.Generator().manual_seed(7)
    tokens = torch.randint(0, V, (T,), generator=g)
    tokens[:4] = torch.tensor([464, 2068, 7586, 21831])  # "The quick brown fox"
    with open(os.path.join(out, "tokens.txt"), "w") as f:
        f.write(",".join(str(int(t)) for t in tokens))

    def save_logits(name, weights, gelu="tanh"):
        logits = gpt2_logits(weights, tokens, L, NH, gelu)[:, :V].float().contiguous()
        logits.numpy().tofile(os.path.join(out, name + ".logits"))

    def tokenizer_into(d):
        shutil.copy(os.path.join(args.tokenizer, "encoder.json"), os.path.join(d, "vocab.json"))
        shutil.copy(os.path.join(args.tokenizer, "vocab.bpe"), os.path.join(d, "merges.txt"))

    cfg = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_layer": L, "n_head": NH, "n_embd": C,
           "n_positions": T, "n_ctx": T, "vocab_size": V, "activation_function": "gelu_new",
           "layer_norm_epsilon": 1e-05}
    # Hugging Face's GPT2Model, F32, with the mask buffers older transformers saved
    d = os.path.join(out, "hf")
    os.makedirs(d, exist_ok=True)
    t = dict(sd)
    for l in range(L):
        t[f"h.{l}.attn.bias"] = torch.tril(torch.ones(T, T)).view(1, 1, T, T)
        t[f"h.{l}.attn.masked_bias"] = torch.tensor(-1e4)
    write_safetensors(os.path.join(d, "model.safetensors"), t)
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    tokenizer_into(d)
    save_logits("hf", sd)
    # GPT2LMHeadModel's names with the tied lm_head, F16 (the reference runs on the F16-rounded weights)
    d = os.path.join(out, "hf_lm")
    os.makedirs(d, exist_ok=True)
    half = {k: v.half().float() for k, v in sd.items()}
    t = {"transformer." + k: v for k, v in half.items()}
    t["lm_head.weight"] = half["wte.weight"]
    write_safetensors(os.path.join(d, "model.safetensors"), t, torch.float16)
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    tokenizer_into(d)
    save_logits("hf_lm", half)
    # llm.c: fp32 (version 3) and bf16 (version 5)
    write_llmc(os.path.join(out, "llmc.bin"), sd, 3)
    save_logits("llmc", sd)
    write_llmc(os.path.join(out, "llmc_bf16.bin"), sd, 5)
    save_logits("llmc_bf16", {k: v.bfloat16().float() for k, v in sd.items()})
    # nanoGPT: model_args of GPT-2's padded vocabulary, exact GELU, random padding rows, no meta.pkl
    d = os.path.join(out, "nanogpt")
    os.makedirs(d, exist_ok=True)
    m = to_llmc_order(sd)
    m["transformer.wte.weight"] = torch.cat([m["transformer.wte.weight"], torch.randn(50304 - V, C, generator=g)])
    m["lm_head.weight"] = m["transformer.wte.weight"]
    args_ = dict(n_layer=L, n_head=NH, n_embd=C, block_size=T, bias=True, vocab_size=50304, dropout=0.0)
    torch.save({"model": m, "model_args": args_, "iter_num": 0, "best_val_loss": torch.tensor(1e9),
                "config": {"dataset": "openwebtext"}}, os.path.join(d, "ckpt.pt"))
    save_logits("nanogpt", sd, gelu="none")
    print(f"GPT-2 fixtures ({L} layers, {NH} heads, n_embd {C}, block {T}, vocabulary {V}) in {out}")
    return 0


def cmd_llmc_read(args):
    h, got = read_llmc(args.file)
    sd = to_llmc_order(random_gpt2()) if args.against == "random" else None
    if sd is None:
        raise SystemExit("llmc-read compares with the fixtures' random model only: give 'random'")
    ok = int(h[2]) == T and int(h[3]) == V and int(h[4]) == L and int(h[5]) == NH and int(h[6]) == C
    ok = ok and int(h[7]) == (V + 127) // 128 * 128 and int(h[1]) == 3
    for name, x in got.items():
        want = sd["transformer." + (name + ".weight" if name in ("wte", "wpe") else name)].numpy()
        if name == "wte":
            ok = ok and np.array_equal(x[:V], want) and not x[V:].any()
        else:
            ok = ok and np.array_equal(x, want)
    print(("llm.c's reader finds the model's weights in " if ok else "MISMATCH reading ") + args.file)
    return 0 if ok else 1


SIZES = {"124M": (12, 12, 768), "350M": (24, 16, 1024), "774M": (36, 20, 1280), "1558M": (48, 25, 1600)}


def cmd_random_gpt2(args):
    """a random-weights GPT-2 of one of its four sizes in Hugging Face's layout (its folder, tokenizer files copied)"""
    n_layer, n_head, n_embd = SIZES[args.size]
    g = torch.Generator().manual_seed(1)
    sd = {"wte.weight": torch.randn(V, n_embd, generator=g) * 0.02, "wpe.weight": torch.randn(1024, n_embd, generator=g) * 0.01}
    for l in range(n_layer):
        p = f"h.{l}."
        for name, shape in (("ln_1.weight", (n_embd,)), ("ln_1.bias", (n_embd,)), ("attn.c_attn.weight", (n_embd, 3 * n_embd)),
                            ("attn.c_attn.bias", (3 * n_embd,)), ("attn.c_proj.weight", (n_embd, n_embd)),
                            ("attn.c_proj.bias", (n_embd,)), ("ln_2.weight", (n_embd,)), ("ln_2.bias", (n_embd,)),
                            ("mlp.c_fc.weight", (n_embd, 4 * n_embd)), ("mlp.c_fc.bias", (4 * n_embd,)),
                            ("mlp.c_proj.weight", (4 * n_embd, n_embd)), ("mlp.c_proj.bias", (n_embd,))):
            sd[p + name] = (1 + 0.1 * torch.randn(*shape, generator=g)) if name.startswith("ln") and name.endswith("weight") \
                else torch.randn(*shape, generator=g) * 0.02
    sd["ln_f.weight"] = torch.ones(n_embd)
    sd["ln_f.bias"] = torch.zeros(n_embd)
    os.makedirs(args.out, exist_ok=True)
    write_safetensors(os.path.join(args.out, "model.safetensors"), sd)
    json.dump({"model_type": "gpt2", "n_layer": n_layer, "n_head": n_head, "n_embd": n_embd, "n_positions": 1024,
               "vocab_size": V, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-05},
              open(os.path.join(args.out, "config.json"), "w"))
    shutil.copy(os.path.join(args.tokenizer, "encoder.json"), os.path.join(args.out, "vocab.json"))
    shutil.copy(os.path.join(args.tokenizer, "vocab.bpe"), os.path.join(args.out, "merges.txt"))
    print(f"random GPT-2 {args.size} ({sum(t.numel() for t in sd.values())} parameters) in {args.out}")
    return 0
