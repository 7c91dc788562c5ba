// The lecture's models, bigram to GPT, recorded as sequences of op dispatches (forward, backward, AdamW).
#include "model/model.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/adamw.h"
#include "ops/attention.h"
#include "ops/crossentropy.h"
#include "ops/dropout.h"
#include "ops/embedding.h"
#include "ops/gelu.h"
#include "ops/layernorm.h"
#include "ops/matmul.h"
#include "rng.h"

namespace attn {


static size_t f4(size_t n) { return n * sizeof(float); }

Activations::Activations(Context& ctx, const Config& cfg, int V, int B_, bool host_logits, int T_, bool forward_only)
    : B(B_), T(T_ > 0 ? T_ : cfg.block_size) {
    size_t bt = size_t(B) * T;
    logits_ld = cfg.kind == ModelKind::Bigram ? uint32_t(V) : ops::matmul_forward_ld(ctx, V, cfg.lm_head_width());
    logits = Buffer(ctx, f4(bt * logits_ld), host_logits);
    losses = Buffer(ctx, f4(bt));
    result = Buffer(ctx, f4(4), true);
    dlogits_ld = cfg.kind == ModelKind::Bigram ? uint32_t(V) : ops::matmul_dout_ld(V, cfg.lm_head_width());
    if (!forward_only) dlogits = Buffer(ctx, f4(bt * dlogits_ld));
    if (cfg.kind == ModelKind::Bigram) return;
    size_t C = cfg.n_embd, A = cfg.attn_dim(), F = cfg.ffn ? cfg.ffn_dim() : 0, NH = cfg.n_head;
    x = Buffer(ctx, f4(bt * C));
    for (int l = 0; l < cfg.n_layer; l++) {
        BlockActs b;
        if (cfg.layernorm) {
            b.ln1 = Buffer(ctx, f4(bt * C));
            b.ln1_stats = Buffer(ctx, f4(bt * 2));
        }
        b.qkv = Buffer(ctx, f4(bt * 3 * A));
        b.att = Buffer(ctx, f4(size_t(B) * NH * T * T));
        b.y = Buffer(ctx, f4(bt * A));
        if (cfg.residual) b.xa = Buffer(ctx, f4(bt * C));
        if (cfg.ffn) {
            if (cfg.layernorm) {
                b.ln2 = Buffer(ctx, f4(bt * C));
                b.ln2_stats = Buffer(ctx, f4(bt * 2));
            }
            b.h = Buffer(ctx, f4(bt * F));
            if (cfg.gelu) b.pre = Buffer(ctx, f4(bt * F));
            if (cfg.residual) b.xf = Buffer(ctx, f4(bt * C));
        }
        blocks.push_back(std::move(b));
    }
    if (cfg.layernorm) {
        lnf = Buffer(ctx, f4(bt * C));
        lnf_stats = Buffer(ctx, f4(bt * 2));
    }
    dtmp = Buffer(ctx, f4(bt * C));  // also the forward's, before a dropout
    if (forward_only) return;
    size_t W = std::max({C, A, F});
    dres = Buffer(ctx, f4(bt * W));
    dres2 = Buffer(ctx, f4(bt * W));
    dln = Buffer(ctx, f4(bt * C));
    dy = Buffer(ctx, f4(bt * A));
    dqkv = Buffer(ctx, f4(bt * 3 * A));
    dh = Buffer(ctx, f4(bt * F));
    dpre = Buffer(ctx, f4(size_t(B) * NH * T * T));
}

Model::Model(Context& ctx, KernelCache& kc, const Config& cfg, int V, bool host_grads)
    : m_ctx(ctx), m_kc(kc), m_cfg(cfg), m_V(V), m_layout(make_layout(cfg, V)) {
    if (ctx.props().limits.minStorageBufferOffsetAlignment > PARAM_ALIGN_FLOATS * sizeof(float))
        throw Error("this GPU needs storage-buffer offsets aligned to more than 256 bytes, which is not supported");
    size_t flat = m_layout.flat;
    params = Buffer(ctx, f4(flat));
    grads = Buffer(ctx, f4(flat), host_grads);
    adam_m = Buffer(ctx, f4(flat));
    adam_v = Buffer(ctx, f4(flat));
    m_dummy = Buffer(ctx, 256);
    m_dummy.fill_zero();
    if (cfg.nanogpt && !cfg.bias) {  // LayerNorm without bias: the same kernels with a zero bias, its gradient unread
        m_zeros = Buffer(ctx, f4(cfg.n_embd));
        m_zeros.fill_zero();
        m_discard = Buffer(ctx, f4(cfg.n_embd));
    }
    norm_parts = Buffer(ctx, f4(ops::grad_norm_parts(uint32_t(flat))));
    clip = Buffer(ctx, f4(4), true);
    const float no_clip[4] = {1.0f, 0.0f, 0.0f, 0.0f};  // scale 1 until a clipped update writes it
    std::memcpy(clip.mapped(), no_clip, sizeof no_clip);
    grads.fill_zero();  // padding between tensors is never written and must stay 0 for AdamW
}

size_t Model::num_params() const {
    size_t n = 0;
    for (auto& pi : m_layout.info) n += pi.count;
    return n;
}

size_t Model::bytes_needed(const Config& c, int V) {
    size_t bt = size_t(c.batch_size) * c.block_size, T = c.block_size;
    if (c.kind == ModelKind::Bigram) return f4(4 * size_t(V) * V + bt * (2 * V + 1));
    size_t C = c.n_embd, A = c.attn_dim(), F = c.ffn ? c.ffn_dim() : 0, L = c.n_layer, NH = c.n_head;
    size_t params = V * C + T * C + L * (3 * A * C + A * C + F * C * 2 + 8 * C) + V * C + V;
    size_t per_block = bt * (2 * C + 3 * A + A + C + 2 * C + F + C + (c.gelu ? F : 0)) + c.batch_size * NH * T * T;
    size_t grads = bt * (2 * std::max({C, A, F}) + C + A + 3 * A + F + C) + c.batch_size * NH * T * T;
    // logits: (V + 3) / 4 * 4, the most matmul_forward_ld pads them to (it needs the device, this estimate has none)
    return f4(4 * params + L * per_block + bt * (C + 2 * C + (V + 3) / 4 * 4 + ops::matmul_dout_ld(V, c.lm_head_width()) + 1) + grads);
}

void Model::init(uint64_t seed) {
    Rng rng(seed);
    std::vector<float> flat(m_layout.flat, 0.0f);
    for (auto& pi : m_layout.info)
        for (size_t i = 0; i < pi.count; i++) {
            float& x = flat[pi.offset + i];
            switch (pi.init) {
                case Init::Normal: x = float(rng.normal() * (pi.bound > 0 ? pi.bound : 1.0)); break;
                case Init::Uniform: x = float(rng.uniform(-pi.bound, pi.bound)); break;
                case Init::Ones: x = 1.0f; break;
                case Init::Zeros: x = 0.0f; break;
            }
        }
    params.upload(flat);
    adam_m.fill_zero();
    adam_v.fill_zero();
}

std::vector<float> Model::read_params() const { return params.read<float>(m_layout.flat); }
void Model::write_params(const std::vector<float>& flat) { params.upload(flat); }
std::vector<float> Model::read_grads() const { return grads.read<float>(m_layout.flat); }

BufferRange Model::p(int i) const {
    const auto& pi = m_layout.info;
    return i < 0 ? BufferRange(m_dummy) : BufferRange{params, f4(pi[i].offset), f4(pi[i].count)};
}
BufferRange Model::g(int i) const {
    const auto& pi = m_layout.info;
    return i < 0 ? BufferRange(m_dummy) : BufferRange{grads, f4(pi[i].offset), f4(pi[i].count)};
}
BufferRange Model::ln_b(int i) const { return i < 0 && m_zeros ? BufferRange(m_zeros) : p(i); }
BufferRange Model::ln_db(int i) const { return i < 0 && m_discard ? BufferRange(m_discard) : g(i); }

const Buffer& Model::block_input(const Activations& a, int l) const { return l == 0 ? a.x : block_output(a, l - 1); }

const Buffer& Model::block_output(const Activations& a, int l) const {
    const BlockActs& b = a.blocks[l];
    if (m_cfg.ffn) return m_cfg.residual ? b.xf : b.h;
    return m_cfg.residual ? b.xa : b.y;
}

void Model::record_forward(Program& pr, Activations& a, BufferRange tokens, BufferRange offsets, const Buffer& seed,
                           bool with_loss, bool training, bool heads_only) {
    const Config& c = m_cfg;
    uint32_t B = a.B, T = a.T, V = m_V, BT = B * T;
    if (c.kind == ModelKind::Bigram) {
        ops::embedding_forward(m_kc, pr, a.logits, tokens, offsets, p(0), m_dummy, B, T, V, false);
    } else {
        uint32_t C = c.n_embd, NH = c.n_head, HS = c.hs(), A = c.attn_dim(), F = c.ffn_dim();
        float drop = training ? c.dropout : 0.0f;
        if (c.nanogpt && drop > 0) {  // nanoGPT's transformer.drop on the embeddings (site 3 n_layer)
            ops::embedding_forward(m_kc, pr, a.dtmp, tokens, offsets, p(0), p(m_layout.wpe), B, T, C, c.use_pos);
            pr.barrier("dropout reads the embeddings");
            ops::dropout_forward(m_kc, pr, a.x, a.dtmp, {}, seed, BT * C, uint32_t(3 * c.n_layer), drop);
        } else {
            ops::embedding_forward(m_kc, pr, a.x, tokens, offsets, p(0), p(m_layout.wpe), B, T, C, c.use_pos);
        }
        for (int l = 0; l < c.n_layer; l++) {
            const BlockParams& P = m_layout.blocks[l];
            BlockActs& L = a.blocks[l];
            const Buffer& in = block_input(a, l);  // (B,T,C)
            const Buffer* a_in = &in;
            if (c.layernorm) {
                pr.barrier("ln1 reads the block input");
                ops::layernorm_forward(m_kc, pr, L.ln1, L.ln1_stats, in, p(P.ln1_w), ln_b(P.ln1_b), BT, C);
                a_in = &L.ln1;
            }
            pr.barrier("the qkv projection reads the block input");
            ops::matmul_forward(m_kc, pr, L.qkv, *a_in, p(P.qkv), p(P.qkv_b), BT, 3 * A, C, P.qkv_b >= 0);
            pr.barrier("attention reads q, k, v");
            ops::attention_forward(m_kc, pr, L.y, L.att, L.qkv, B, T, NH, HS, c.causal, {drop, uint32_t(3 * l), seed});
            if (heads_only && l == c.n_layer - 1) {
                a.dlogits_recorded = false;
                return;
            }
            const Buffer* mid = &L.y;
            if (c.residual) {
                pr.barrier("the output projection reads the heads");
                ops::MatmulDropout md{seed, uint32_t(3 * l + 1), drop};
                if (drop > 0 && ops::matmul_forward_can_dropout(m_ctx, C, A, L.xa, in)) {  // one dispatch
                    ops::matmul_forward(m_kc, pr, L.xa, L.y, p(P.proj_w), p(P.proj_b), BT, C, A, P.proj_b >= 0, false, in, 0, &md);
                } else if (drop > 0) {
                    ops::matmul_forward(m_kc, pr, a.dtmp, L.y, p(P.proj_w), p(P.proj_b), BT, C, A, P.proj_b >= 0);
                    pr.barrier("dropout reads the projection");
                    ops::dropout_forward(m_kc, pr, L.xa, a.dtmp, in, seed, BT * C, md.site, drop);
                } else {
                    ops::matmul_forward(m_kc, pr, L.xa, L.y, p(P.proj_w), p(P.proj_b), BT, C, A, P.proj_b >= 0, false, in);
                }
                mid = &L.xa;
            }
            if (!c.ffn) continue;
            const Buffer* f_in = mid;
            if (c.layernorm) {
                pr.barrier("ln2 reads the stream after attention");
                ops::layernorm_forward(m_kc, pr, L.ln2, L.ln2_stats, *mid, p(P.ln2_w), ln_b(P.ln2_b), BT, C);
                f_in = &L.ln2;
            }
            pr.barrier("the feed-forward reads its input");
            if (c.gelu) {  // nanoGPT's MLP: GELU in a dispatch of its own, its input kept for the backward
                ops::matmul_forward(m_kc, pr, L.pre, *f_in, p(P.fc_w), p(P.fc_b), BT, F, C, P.fc_b >= 0, false);
                pr.barrier("GELU reads the feed-forward's pre-activation");
                ops::gelu_forward(m_kc, pr, L.h, L.pre, BT * F, c.gelu_tanh);
            } else {
                ops::matmul_forward(m_kc, pr, L.h, *f_in, p(P.fc_w), p(P.fc_b), BT, F, C, true, true);
            }
            if (c.residual) {
                pr.barrier("the feed-forward projection reads the hidden layer");
                ops::MatmulDropout md{seed, uint32_t(3 * l + 2), drop};
                if (drop > 0 && ops::matmul_forward_can_dropout(m_ctx, C, F, L.xf, *mid)) {  // one dispatch
                    ops::matmul_forward(m_kc, pr, L.xf, L.h, p(P.fc2_w), p(P.fc2_b), BT, C, F, P.fc2_b >= 0, false, *mid, 0, &md);
                } else if (drop > 0) {
                    ops::matmul_forward(m_kc, pr, a.dtmp, L.h, p(P.fc2_w), p(P.fc2_b), BT, C, F, P.fc2_b >= 0);
                    pr.barrier("dropout reads the projection");
                    ops::dropout_forward(m_kc, pr, L.xf, a.dtmp, *mid, seed, BT * C, md.site, drop);
                } else {
                    ops::matmul_forward(m_kc, pr, L.xf, L.h, p(P.fc2_w), p(P.fc2_b), BT, C, F, P.fc2_b >= 0, false, *mid);
                }
            }
        }
        const Buffer* fin = &block_output(a, c.n_layer - 1);
        uint32_t D = c.lm_head_width();
        if (c.layernorm) {
            pr.barrier("the final LayerNorm reads the stream");
            ops::layernorm_forward(m_kc, pr, a.lnf, a.lnf_stats, *fin, p(m_layout.lnf_w), ln_b(m_layout.lnf_b), BT, C);
            fin = &a.lnf;
        }
        pr.barrier("lm_head reads the final stream");
        ops::matmul_forward(m_kc, pr, a.logits, *fin, p(m_layout.lm_w), p(m_layout.lm_b), BT, V, D, m_layout.lm_b >= 0,
                            false, {}, a.logits_ld);
    }
    a.dlogits_recorded = false;
    if (!with_loss) return;
    pr.barrier("cross-entropy reads the logits");
    if (training) {  // a training step: the loss's gradient too, in the same pass (record_backward starts from it)
        ops::crossentropy_fused(m_kc, pr, a.losses, a.dlogits, a.logits, tokens, offsets, B, T, V, a.dlogits_ld,
                                a.logits_ld);
        a.dlogits_recorded = true;
    } else {
        ops::crossentropy_forward(m_kc, pr, a.losses, a.logits, tokens, offsets, B, T, V, a.logits_ld);
    }
    pr.barrier("the mean reads every row's loss");
    ops::mean_forward(m_kc, pr, a.result, a.losses, BT, 0);
}

void Model::record_backward(Program& pr, Activations& a, BufferRange tokens, BufferRange offsets, const Buffer& seed) {
    const Config& c = m_cfg;
    uint32_t B = a.B, T = a.T, V = m_V, BT = B * T;
    if (!a.dlogits_recorded)
        ops::crossentropy_backward(m_kc, pr, a.dlogits, a.logits, tokens, offsets, B, T, V, a.dlogits_ld,
                                   a.logits_ld);
    pr.barrier("backward reads dlogits");
    if (c.kind == ModelKind::Bigram) {
        ops::embedding_backward(m_kc, pr, g(0), m_dummy, a.dlogits, tokens, offsets, B, T, V, V, false);
        return;
    }
    uint32_t C = c.n_embd, NH = c.n_head, HS = c.hs(), A = c.attn_dim(), F = c.ffn_dim();
    uint32_t D = c.lm_head_width();
    float drop = c.dropout;
    const bool res = c.residual;
    // Backward sums over the B*T rows (dw, dbias, LayerNorm's dw/db) split into row ranges on a GPU (1 range
    // on lavapipe, see ops/reduce.h); their partial sums share one scratch buffer, sized here before recording.
    Context& ctx = m_kc.context();
    auto mm_splits = [&](uint32_t N, uint32_t K) { return ops::matmul_backward_splits(ctx, BT, N, K); };
    auto ln_splits = [&] { return ops::layernorm_backward_splits(ctx, BT, C); };
    bool padded = a.dlogits_ld != V;  // lm_head: dlogits' rows padded to a multiple of 4, read four at a time
    uint32_t lm_splits = ops::matmul_backward_splits(ctx, BT, V, D, padded);
    size_t scratch = std::max({ops::matmul_backward_scratch(V, D, true, lm_splits),
                               ops::matmul_backward_scratch(3 * A, C, false, mm_splits(3 * A, C)),
                               ops::matmul_backward_scratch(C, A, true, mm_splits(C, A)),
                               c.ffn ? ops::matmul_backward_scratch(F, C, true, mm_splits(F, C)) : 0,
                               c.ffn ? ops::matmul_backward_scratch(C, F, true, mm_splits(C, F)) : 0,
                               c.layernorm ? ops::layernorm_backward_scratch(C, ln_splits()) : 0});
    if (scratch && a.scratch.bytes() < scratch * 4) a.scratch = Buffer(ctx, scratch * 4);
    auto mm_back = [&](BufferRange dinp, BufferRange dw, BufferRange db, BufferRange dout, BufferRange inp, BufferRange w,
                       BufferRange out, uint32_t M, uint32_t N, uint32_t K, bool has_bias, bool relu, bool want_dinp,
                       bool accumulate, bool mask_in = false) {
        ops::matmul_backward(m_kc, pr, {.dinp = dinp, .dw = dw, .dbias = db, .dout = dout, .inp = inp, .w = w,
            .out = out, .M = M, .N = N, .K = K, .has_bias = has_bias, .relu = relu, .want_dinp = want_dinp,
            .accumulate = accumulate, .scratch = a.scratch, .splits = mm_splits(N, K), .mask_in = mask_in});
    };
    // The feed-forward's ReLU mask, in a block with residuals: applied once by fc2's backward as it stores dh
    // (mask_in) rather than by fc's, for every fetch of dh (ops::matmul_backward)
    bool relu_by_fc2 = !c.gelu && ops::matmul_backward_can_mask_in(ctx, C, F);
    // A residual branch's output gradient as its projection reads it: the stream's gradient through the branch's
    // dropout (mask `site`, the forward's), or the stream's own when there is no dropout. The LayerNorm backward that
    // last wrote the stream's gradient has usually stored it in a.dtmp already (next_site below); else a dispatch here.
    int dtmp_site = -1;  // the site whose dropout backward a.dtmp holds, of the stream's gradient as it is now
    auto undropped = [&](const Buffer* dstream, uint32_t site) -> const Buffer* {
        if (drop <= 0) return dstream;
        if (dtmp_site != int(site)) {
            ops::dropout_backward(m_kc, pr, a.dtmp, *dstream, seed, BT * C, site, drop);
            pr.barrier("the projection backward reads the undropped gradient");
        }
        dtmp_site = -1;
        return &a.dtmp;
    };
    // ln_back writing the stream's gradient (residual blocks with dropout): also a.dtmp for the branch it feeds next,
    // dropout site `next_site` (-1: none, the embeddings come next)
    auto ln_back = [&](BufferRange dinp, BufferRange dw, BufferRange db, BufferRange dout, BufferRange inp,
                       BufferRange w, BufferRange stats, uint32_t N, uint32_t C_, bool accumulate, int next_site = -1) {
        ops::LayerNormDropout ld{a.dtmp, seed, uint32_t(std::max(next_site, 0)), drop};
        bool fuse = res && drop > 0 && next_site >= 0 && C_ % 4 == 0;
        ops::layernorm_backward(m_kc, pr, dinp, dw, db, dout, inp, w, stats, N, C_, accumulate, a.scratch, ln_splits(),
                                fuse ? &ld : nullptr);
        dtmp_site = fuse ? next_site : -1;
    };
    // the dropout site of layer l's last residual branch (its backward reads the stream's gradient first)
    auto last_site = [&](int l) { return l < 0 ? -1 : 3 * l + (c.ffn ? 2 : 1); };
    // The stream's gradient. With residuals every branch adds into one buffer (the identity path is free);
    // without, each layer reads one buffer and writes the other.
    Buffer* cur = &a.dres;
    Buffer* other = &a.dres2;
    const Buffer& last = block_output(a, c.n_layer - 1);
    if (c.layernorm) {
        ops::matmul_backward(m_kc, pr, {.dinp = a.dln, .dw = g(m_layout.lm_w), .dbias = g(m_layout.lm_b),
            .dout = a.dlogits, .inp = a.lnf, .w = p(m_layout.lm_w), .out = m_dummy, .M = BT, .N = V, .K = D,
            .has_bias = m_layout.lm_b >= 0, .scratch = a.scratch, .splits = lm_splits, .dout_padded = padded});
        pr.barrier("ln_f backward reads its output gradient");
        ln_back(*cur, g(m_layout.lnf_w), ln_db(m_layout.lnf_b), a.dln, last, p(m_layout.lnf_w), a.lnf_stats, BT, C, false,
                last_site(int(c.n_layer) - 1));
    } else {
        ops::matmul_backward(m_kc, pr, {.dinp = *cur, .dw = g(m_layout.lm_w), .dbias = g(m_layout.lm_b),
            .dout = a.dlogits, .inp = last, .w = p(m_layout.lm_w), .out = m_dummy, .M = BT, .N = V, .K = D,
            .has_bias = m_layout.lm_b >= 0, .scratch = a.scratch, .splits = lm_splits, .dout_padded = padded});
    }
    for (int l = c.n_layer - 1; l >= 0; l--) {
        const BlockParams& P = m_layout.blocks[l];
        BlockActs& L = a.blocks[l];
        const Buffer& in = block_input(a, l);
        const Buffer& mid = res ? L.xa : L.y;
        if (c.ffn) {
            pr.barrier("feed-forward backward reads the stream gradient");
            if (res) {
                const Buffer* dbranch = undropped(cur, 3 * l + 2);
                mm_back(a.dh, g(P.fc2_w), g(P.fc2_b), *dbranch, L.h, p(P.fc2_w), m_dummy, BT, C, F, P.fc2_b >= 0, false, true, false,
                        relu_by_fc2);
                pr.barrier("fc backward reads dh");
                if (c.gelu) {  // dh through the GELU, in place (each element reads and writes only itself)
                    ops::gelu_backward(m_kc, pr, a.dh, a.dh, L.pre, BT * F, c.gelu_tanh);
                    pr.barrier("fc backward reads the GELU's input gradient");
                }
                bool mask = !relu_by_fc2 && !c.gelu;
                if (c.layernorm) {
                    mm_back(a.dln, g(P.fc_w), g(P.fc_b), a.dh, L.ln2, p(P.fc_w), L.h, BT, F, C, P.fc_b >= 0, mask, true, false);
                    pr.barrier("ln2 backward reads its output gradient");
                    ln_back(*cur, g(P.ln2_w), ln_db(P.ln2_b), a.dln, mid, p(P.ln2_w), L.ln2_stats, BT, C, true, 3 * l + 1);
                } else {
                    mm_back(*cur, g(P.fc_w), g(P.fc_b), a.dh, mid, p(P.fc_w), L.h, BT, F, C, true, mask, true, true);
                }
            } else {
                const Buffer& f_in = c.layernorm ? L.ln2 : mid;
                Buffer& target = c.layernorm ? a.dln : *other;
                const Buffer* dfc = cur;
                if (c.gelu) {
                    ops::gelu_backward(m_kc, pr, a.dh, *cur, L.pre, BT * F, c.gelu_tanh);
                    pr.barrier("fc backward reads the GELU's input gradient");
                    dfc = &a.dh;
                }
                mm_back(target, g(P.fc_w), g(P.fc_b), *dfc, f_in, p(P.fc_w), L.h, BT, F, C, true, !c.gelu, true, false);
                if (c.layernorm) {
                    pr.barrier("ln2 backward reads its output gradient");
                    ln_back(*other, g(P.ln2_w), g(P.ln2_b), a.dln, mid, p(P.ln2_w), L.ln2_stats, BT, C, false);
                }
                std::swap(cur, other);
            }
        }
        pr.barrier("attention backward reads the stream gradient");
        const Buffer* dy = cur;
        if (res) {
            const Buffer* dbranch = undropped(cur, 3 * l + 1);
            mm_back(a.dy, g(P.proj_w), g(P.proj_b), *dbranch, L.y, p(P.proj_w), m_dummy, BT, C, A, P.proj_b >= 0, false, true, false);
            pr.barrier("attention backward reads dy");
            dy = &a.dy;
        }
        ops::attention_backward(m_kc, pr, a.dqkv, a.dpre, *dy, L.qkv, L.att, L.y, B, T, NH, HS, c.causal, {drop, uint32_t(3 * l), seed});
        pr.barrier("the qkv projection backward reads dqkv");
        const Buffer& a_in = c.layernorm ? L.ln1 : in;
        if (res) {
            if (c.layernorm) {
                mm_back(a.dln, g(P.qkv), g(P.qkv_b), a.dqkv, a_in, p(P.qkv), m_dummy, BT, 3 * A, C, P.qkv_b >= 0, false, true,
                        false);
                pr.barrier("ln1 backward reads its output gradient");
                ln_back(*cur, g(P.ln1_w), ln_db(P.ln1_b), a.dln, in, p(P.ln1_w), L.ln1_stats, BT, C, true, last_site(l - 1));
            } else {
                mm_back(*cur, g(P.qkv), m_dummy, a.dqkv, a_in, p(P.qkv), m_dummy, BT, 3 * A, C, false, false, true, true);
            }
        } else {
            Buffer& target = c.layernorm ? a.dln : *other;
            mm_back(target, g(P.qkv), m_dummy, a.dqkv, a_in, p(P.qkv), m_dummy, BT, 3 * A, C, false, false, true, false);
            if (c.layernorm) {
                pr.barrier("ln1 backward reads its output gradient");
                ln_back(*other, g(P.ln1_w), g(P.ln1_b), a.dln, in, p(P.ln1_w), L.ln1_stats, BT, C, false);
            }
            std::swap(cur, other);
        }
    }
    pr.barrier("embedding backward reads the stream gradient");
    if (c.nanogpt && drop > 0) {
        ops::dropout_backward(m_kc, pr, a.dtmp, *cur, seed, BT * C, uint32_t(3 * c.n_layer), drop);
        pr.barrier("embedding backward reads the embeddings' gradient");
        cur = &a.dtmp;
    }
    // tied lm_head (lm_w 0): its gradient is already in wte's, the embedding's adds to it
    ops::embedding_backward(m_kc, pr, g(0), g(m_layout.wpe), *cur, tokens, offsets, B, T, C, V, c.use_pos,
                            m_layout.lm_w == 0);
}

void Model::record_update(Program& pr, const Buffer& hyper, const Buffer* slices, uint32_t replicas,
                          const float* weights) {
    BufferRange g = slices ? BufferRange(*slices) : BufferRange(grads);
    uint32_t R = slices ? replicas : 1;
    if (m_cfg.grad_clip > 0) {  // the global norm first: AdamW scales the gradient by min(1, clip / norm)
        ops::grad_norm(m_kc, pr, clip, norm_parts, g, hyper, uint32_t(m_layout.flat), R, weights);
        pr.barrier("AdamW reads the clipping scale");
    }
    ops::adamw(m_kc, pr, params, g, adam_m, adam_v, hyper, clip, uint32_t(m_layout.flat), uint32_t(m_layout.decay_end),
               R, weights);
}

}  // namespace attn
