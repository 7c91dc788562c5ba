// CPU twin of the whole model in double precision, built from the reference ops: loss and every gradient.
#pragma once
#include "model/model.h"
#include "reference/ops_ref.h"

namespace ref {

// Returns the mean loss; fills grads (flat, same layout as the GPU buffer) when grads != nullptr.
inline double model_loss(const attn::Model& m, const Vec& flat, const U32& tokens, const U32& off, int B, Vec* grads) {
    const auto& cfg = m.config();
    const auto& info = m.params_info();
    int T = cfg.block_size, V = m.vocab_size(), C = cfg.n_embd, HS = cfg.head_size;
    auto slice = [&](size_t i) { return Vec(flat.begin() + info[i].offset, flat.begin() + info[i].offset + info[i].count); };
    auto put = [&](size_t i, const Vec& g) { std::copy(g.begin(), g.end(), grads->begin() + info[i].offset); };
    if (grads) grads->assign(flat.size(), 0.0);
    Vec losses, dlogits;
    if (cfg.kind == attn::ModelKind::Bigram) {
        Vec wte = slice(0), logits;
        embedding_forward(logits, tokens, off, wte, nullptr, B, T, V);
        double loss = crossentropy_forward(losses, logits, tokens, off, B, T, V);
        if (grads) {
            Vec dwte;
            crossentropy_backward(dlogits, logits, tokens, off, B, T, V);
            embedding_backward(dwte, nullptr, dlogits, tokens, off, B, T, V, V);
            put(0, dwte);
        }
        return loss;
    }
    Vec wte = slice(0), wpe = slice(1), wqkv = slice(2), lmw = slice(3), lmb = slice(4);
    Vec x, qkv, att, y, logits;
    embedding_forward(x, tokens, off, wte, &wpe, B, T, C);
    matmul_forward(qkv, x, wqkv, nullptr, B * T, 3 * HS, C);
    attention_forward(y, att, qkv, B, T, 1, HS, cfg.causal);
    matmul_forward(logits, y, lmw, &lmb, B * T, V, HS);
    double loss = crossentropy_forward(losses, logits, tokens, off, B, T, V);
    if (!grads) return loss;
    Vec dy, dlmw, dlmb, dqkv, dx, dwqkv, dwte, dwpe;
    crossentropy_backward(dlogits, logits, tokens, off, B, T, V);
    matmul_backward(dy, dlmw, &dlmb, dlogits, y, lmw, logits, B * T, V, HS);
    attention_backward(dqkv, dy, qkv, att, B, T, 1, HS);
    matmul_backward(dx, dwqkv, nullptr, dqkv, x, wqkv, qkv, B * T, 3 * HS, C);
    embedding_backward(dwte, &dwpe, dx, tokens, off, B, T, C, V);
    put(0, dwte); put(1, dwpe); put(2, dwqkv); put(3, dlmw); put(4, dlmb);
    return loss;
}

}  // namespace ref
