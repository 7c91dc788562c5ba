// CPU twin of the whole model in double precision, built from the reference ops: loss and every gradient.
// It mirrors Model::record_forward / record_backward, including the Philox dropout masks.
#pragma once
#include <array>
#include <functional>

#include "model/model.h"
#include "reference/ops_ref.h"

namespace ref {

// Returns the mean loss; fills grads (flat, same layout as the GPU buffer) when grads != nullptr.
// `key` is the dropout key of the step (ignored when dropout is 0); logits_out, when given, receives the logits
// (B,T,V). heads_hook, when given, may change each block's concatenated heads y (B,T,A) before anything reads them
// (ablation tests: forward only).
inline double model_loss(const attn::Model& m, const Vec& flat, const U32& tokens, const U32& off, int B, Vec* grads,
                         std::array<uint32_t, 2> key = {0, 0}, Vec* logits_out = nullptr,
                         const std::function<void(int layer, Vec& y)>& heads_hook = {}) {
    const auto& c = m.config();
    const auto& info = m.params_info();
    int T = c.block_size, V = m.vocab_size(), BT = B * T;
    auto P = [&](int i) { return i < 0 ? Vec() : Vec(flat.begin() + info[i].offset, flat.begin() + info[i].offset + info[i].count); };
    auto put = [&](int i, const Vec& g) {
        if (i >= 0) std::copy(g.begin(), g.begin() + info[i].count, grads->begin() + info[i].offset);
    };
    auto add_to = [&](int i, const Vec& g) {  // a tied tensor's second gradient
        for (size_t k = 0; k < info[i].count; k++) (*grads)[info[i].offset + k] += g[k];
    };
    // a LayerNorm's bias, zeros where it has none (nanoGPT's bias=False); a Linear's, null where it has none
    auto lnb = [&](int i) { return i < 0 ? Vec(size_t(c.n_embd), 0.0) : P(i); };
    std::vector<Vec> biases;
    biases.reserve(64 * size_t(c.n_layer) + 8);
    auto bias = [&](int i) -> const Vec* { return i < 0 ? nullptr : &biases.emplace_back(P(i)); };
    if (grads) grads->assign(flat.size(), 0.0);
    Vec losses, dlogits, logits;
    if (c.kind == attn::ModelKind::Bigram) {
        embedding_forward(logits, tokens, off, P(0), nullptr, B, T, V);
        double loss = crossentropy_forward(losses, logits, tokens, off, B, T, V);
        if (logits_out) *logits_out = logits;
        if (grads) {
            Vec dwte;
            crossentropy_backward(dlogits, logits, tokens, off, B, T, V);
            embedding_backward(dwte, nullptr, dlogits, tokens, off, B, T, V, V);
            put(0, dwte);
        }
        return loss;
    }
    int C = c.n_embd, NH = c.n_head, HS = c.hs(), A = c.attn_dim(), F = c.ffn_dim(), L = c.n_layer;
    int D = (c.residual || c.ffn) ? C : A;
    auto drop = [&](int site, float p) { Drop d; d.p = p; d.site = uint32_t(site); d.key[0] = key[0]; d.key[1] = key[1]; return d; };
    float p = c.dropout;
    struct Acts { Vec in, ln1, qkv, att, y, proj, mid, ln2, pre, h, fc2, out; };
    std::vector<Acts> acts(L);
    Vec x, wpe = P(m.wpe()), emb;
    embedding_forward(emb, tokens, off, P(0), c.use_pos ? &wpe : nullptr, B, T, C);
    if (c.nanogpt) dropout_forward(x, emb, nullptr, drop(3 * L, p));  // nanoGPT's transformer.drop
    else x = emb;
    Vec cur = x;
    for (int l = 0; l < L; l++) {
        const auto& bp = m.blocks()[l];
        Acts& a = acts[l];
        a.in = cur;
        const Vec* a_in = &a.in;
        if (c.layernorm) { layernorm_forward(a.ln1, a.in, P(bp.ln1_w), lnb(bp.ln1_b), BT, C); a_in = &a.ln1; }
        matmul_forward(a.qkv, *a_in, P(bp.qkv), bias(bp.qkv_b), BT, 3 * A, C);
        attention_forward(a.y, a.att, a.qkv, B, T, NH, HS, c.causal, drop(3 * l, p));
        if (heads_hook) heads_hook(l, a.y);
        a.mid = a.y;
        if (c.residual) {
            matmul_forward(a.proj, a.y, P(bp.proj_w), bias(bp.proj_b), BT, C, A);
            dropout_forward(a.mid, a.proj, &a.in, drop(3 * l + 1, p));
        }
        a.out = a.mid;
        if (c.ffn) {
            const Vec* f_in = &a.mid;
            if (c.layernorm) { layernorm_forward(a.ln2, a.mid, P(bp.ln2_w), lnb(bp.ln2_b), BT, C); f_in = &a.ln2; }
            if (c.gelu) {
                matmul_forward(a.pre, *f_in, P(bp.fc_w), bias(bp.fc_b), BT, F, C, false);
                gelu_forward(a.h, a.pre, c.gelu_tanh);
            } else {
                matmul_forward(a.h, *f_in, P(bp.fc_w), bias(bp.fc_b), BT, F, C, true);
            }
            a.out = a.h;
            if (c.residual) {
                matmul_forward(a.fc2, a.h, P(bp.fc2_w), bias(bp.fc2_b), BT, C, F);
                dropout_forward(a.out, a.fc2, &a.mid, drop(3 * l + 2, p));
            }
        }
        cur = a.out;
    }
    Vec lnf;
    const Vec* fin = &cur;
    if (c.layernorm) { layernorm_forward(lnf, cur, P(m.lnf_w()), lnb(m.lnf_b()), BT, C); fin = &lnf; }
    matmul_forward(logits, *fin, P(m.lm_w()), bias(m.lm_b()), BT, V, D);
    double loss = crossentropy_forward(losses, logits, tokens, off, B, T, V);
    if (logits_out) *logits_out = logits;
    if (!grads) return loss;

    Vec dcur, dfin, dw, db, dwb, tmp;
    crossentropy_backward(dlogits, logits, tokens, off, B, T, V);
    matmul_backward(dfin, dw, m.lm_b() >= 0 ? &db : nullptr, dlogits, *fin, P(m.lm_w()), logits, BT, V, D);
    put(m.lm_w(), dw); put(m.lm_b(), db);  // tied (lm_w 0): the embedding's gradient is added below
    if (c.layernorm) {
        layernorm_backward(dcur, dw, db, dfin, cur, P(m.lnf_w()), BT, C);
        put(m.lnf_w(), dw); put(m.lnf_b(), db);
    } else {
        dcur = dfin;
    }
    auto add = [](Vec& a, const Vec& b) { for (size_t i = 0; i < a.size(); i++) a[i] += b[i]; };
    for (int l = L - 1; l >= 0; l--) {
        const auto& bp = m.blocks()[l];
        Acts& a = acts[l];
        Vec dmid;  // gradient at the stream after attention
        if (c.ffn) {
            Vec dh, df_in;
            const Vec& f_in = c.layernorm ? a.ln2 : a.mid;
            if (c.residual) {
                Vec dbranch;
                dropout_backward(dbranch, dcur, drop(3 * l + 2, p));
                matmul_backward(dh, dw, bp.fc2_b >= 0 ? &db : nullptr, dbranch, a.h, P(bp.fc2_w), a.fc2, BT, C, F);
                put(bp.fc2_w, dw); put(bp.fc2_b, db);
            } else {
                dh = dcur;
            }
            if (c.gelu) {
                Vec dpre;
                gelu_backward(dpre, dh, a.pre, c.gelu_tanh);
                matmul_backward(df_in, dw, bp.fc_b >= 0 ? &db : nullptr, dpre, f_in, P(bp.fc_w), a.h, BT, F, C, false);
            } else {
                matmul_backward(df_in, dw, bp.fc_b >= 0 ? &db : nullptr, dh, f_in, P(bp.fc_w), a.h, BT, F, C, true);
            }
            put(bp.fc_w, dw); put(bp.fc_b, db);
            if (c.layernorm) {
                Vec dwl, dbl;
                layernorm_backward(tmp, dwl, dbl, df_in, a.mid, P(bp.ln2_w), BT, C);
                put(bp.ln2_w, dwl); put(bp.ln2_b, dbl);
                df_in = tmp;
            }
            dmid = df_in;
            if (c.residual) add(dmid, dcur);
        } else {
            dmid = dcur;
        }
        Vec dy, dqkv, da_in;
        if (c.residual) {
            Vec dbranch;
            dropout_backward(dbranch, dmid, drop(3 * l + 1, p));
            matmul_backward(dy, dw, bp.proj_b >= 0 ? &db : nullptr, dbranch, a.y, P(bp.proj_w), a.proj, BT, C, A);
            put(bp.proj_w, dw); put(bp.proj_b, db);
        } else {
            dy = dmid;
        }
        attention_backward(dqkv, dy, a.qkv, a.att, B, T, NH, HS, drop(3 * l, p));
        const Vec& a_in = c.layernorm ? a.ln1 : a.in;
        matmul_backward(da_in, dw, bp.qkv_b >= 0 ? &db : nullptr, dqkv, a_in, P(bp.qkv), a.qkv, BT, 3 * A, C);
        put(bp.qkv, dw); put(bp.qkv_b, db);
        if (c.layernorm) {
            Vec dwl, dbl;
            layernorm_backward(tmp, dwl, dbl, da_in, a.in, P(bp.ln1_w), BT, C);
            put(bp.ln1_w, dwl); put(bp.ln1_b, dbl);
            da_in = tmp;
        }
        if (c.residual) add(da_in, dmid);
        dcur = da_in;
    }
    Vec dwte, dwpe;
    if (c.nanogpt) {
        Vec demb;
        dropout_backward(demb, dcur, drop(3 * L, p));
        dcur = demb;
    }
    embedding_backward(dwte, c.use_pos ? &dwpe : nullptr, dcur, tokens, off, B, T, C, V);
    if (m.lm_w() == 0) add_to(0, dwte);
    else put(0, dwte);
    if (c.use_pos) put(m.wpe(), dwpe);
    return loss;
}

}  // namespace ref
