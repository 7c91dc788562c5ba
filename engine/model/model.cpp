// The bigram and single-head models of the lecture, recorded as sequences of op dispatches.
#include "model/model.h"

#include <cmath>

#include "ops/adamw.h"
#include "ops/attention.h"
#include "ops/crossentropy.h"
#include "ops/embedding.h"
#include "ops/matmul.h"
#include "rng.h"

namespace attn {

static constexpr size_t ALIGN_FLOATS = 64;  // 256 bytes: the largest minStorageBufferOffsetAlignment in practice

static size_t f4(size_t n) { return n * sizeof(float); }

Activations::Activations(Context& ctx, const Config& cfg, int V, int B_, bool host_logits) : B(B_), T(cfg.block_size) {
    size_t bt = size_t(B) * T;
    bool bigram = cfg.kind == ModelKind::Bigram;
    size_t C = bigram ? 0 : cfg.n_embd, HS = bigram ? 0 : cfg.head_size, NH = bigram ? 0 : 1;
    x = Buffer(ctx, f4(bt * C));
    qkv = Buffer(ctx, f4(bt * 3 * HS));
    att = Buffer(ctx, f4(size_t(B) * NH * T * T));
    y = Buffer(ctx, f4(bt * HS));
    logits = Buffer(ctx, f4(bt * V), host_logits);
    losses = Buffer(ctx, f4(bt));
    dlogits = Buffer(ctx, f4(bt * V));
    dy = Buffer(ctx, f4(bt * HS));
    dqkv = Buffer(ctx, f4(bt * 3 * HS));
    dpre = Buffer(ctx, f4(size_t(B) * NH * T * T));
    dx = Buffer(ctx, f4(bt * C));
    result = Buffer(ctx, f4(4), true);
}

Model::Model(Context& ctx, KernelCache& kc, const Config& cfg, int V) : m_ctx(ctx), m_kc(kc), m_cfg(cfg), m_V(V) {
    if (ctx.props().limits.minStorageBufferOffsetAlignment > ALIGN_FLOATS * sizeof(float))
        throw Error("this GPU needs storage-buffer offsets aligned to more than 256 bytes, which is not supported");
    auto add = [&](std::string name, std::vector<int> shape, float bound) {
        ParamInfo pi{std::move(name), std::move(shape), m_flat, 1, bound};
        for (int d : pi.shape) pi.count *= size_t(d);
        m_flat += (pi.count + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS;
        m_info.push_back(pi);
    };
    int T = cfg.block_size, C = cfg.n_embd, HS = cfg.head_size;
    if (cfg.kind == ModelKind::Bigram) {
        add("token_embedding_table.weight", {V, V}, 0);
    } else {
        add("token_embedding_table.weight", {V, C}, 0);
        add("position_embedding_table.weight", {T, C}, 0);
        // key, query, value Linear(C, HS, bias=False) stacked as one (3*HS, C) matrix: q | k | v
        add("sa_head.qkv.weight", {3 * HS, C}, 1.0f / std::sqrt(float(C)));
        add("lm_head.weight", {V, HS}, 1.0f / std::sqrt(float(HS)));
        add("lm_head.bias", {V}, 1.0f / std::sqrt(float(HS)));
    }
    params = Buffer(ctx, f4(m_flat));
    grads = Buffer(ctx, f4(m_flat));
    adam_m = Buffer(ctx, f4(m_flat));
    adam_v = Buffer(ctx, f4(m_flat));
    m_dummy = Buffer(ctx, 256);
    m_dummy.fill_zero();
    grads.fill_zero();  // padding between tensors is never written and must stay 0 for AdamW
}

size_t Model::num_params() const {
    size_t n = 0;
    for (auto& pi : m_info) n += pi.count;
    return n;
}

size_t Model::bytes_needed(int B) const {
    size_t bt = size_t(B) * m_cfg.block_size;
    size_t HS = m_cfg.head_size, C = m_cfg.n_embd, T = m_cfg.block_size;
    size_t act = m_cfg.kind == ModelKind::Bigram ? bt * m_V * 2 + bt
                                                 : bt * (2 * C + 6 * HS + 2 * m_V + 1) + 2 * size_t(B) * T * T;
    return f4(4 * m_flat + act);
}

void Model::init(uint64_t seed) {
    Rng rng(seed);
    std::vector<float> flat(m_flat, 0.0f);
    for (auto& pi : m_info)
        for (size_t i = 0; i < pi.count; i++)
            flat[pi.offset + i] = pi.init_bound == 0 ? float(rng.normal()) : float(rng.uniform(-pi.init_bound, pi.init_bound));
    params.upload(flat);
    adam_m.fill_zero();
    adam_v.fill_zero();
}

std::vector<float> Model::read_params() const { return params.read<float>(m_flat); }
void Model::write_params(const std::vector<float>& flat) { params.upload(flat); }
std::vector<float> Model::read_grads() const { return grads.read<float>(m_flat); }

BufferRange Model::p(size_t i) const { return {params, f4(m_info[i].offset), f4(m_info[i].count)}; }
BufferRange Model::g(size_t i) const { return {grads, f4(m_info[i].offset), f4(m_info[i].count)}; }

void Model::record_forward(Program& pr, Activations& a, BufferRange tokens, BufferRange offsets, bool with_loss) {
    uint32_t B = a.B, T = a.T, V = m_V, C = m_cfg.n_embd, HS = m_cfg.head_size, BT = B * T;
    if (m_cfg.kind == ModelKind::Bigram) {
        ops::embedding_forward(m_kc, pr, a.logits, tokens, offsets, p(0), m_dummy, B, T, V, false);
    } else {
        ops::embedding_forward(m_kc, pr, a.x, tokens, offsets, p(0), p(1), B, T, C, true);
        pr.barrier("qkv projection reads the embeddings");
        ops::matmul_forward(m_kc, pr, a.qkv, a.x, p(2), m_dummy, BT, 3 * HS, C, false);
        pr.barrier("attention reads q, k, v");
        ops::attention_forward(m_kc, pr, a.y, a.att, a.qkv, B, T, 1, HS, m_cfg.causal);
        pr.barrier("lm_head reads the attention output");
        ops::matmul_forward(m_kc, pr, a.logits, a.y, p(3), p(4), BT, V, HS, true);
    }
    if (!with_loss) return;
    pr.barrier("cross-entropy reads the logits");
    ops::crossentropy_forward(m_kc, pr, a.losses, a.logits, tokens, offsets, B, T, V);
    pr.barrier("the mean reads every row's loss");
    ops::mean_forward(m_kc, pr, a.result, a.losses, BT, 0);
}

void Model::record_backward(Program& pr, Activations& a, BufferRange tokens, BufferRange offsets) {
    uint32_t B = a.B, T = a.T, V = m_V, C = m_cfg.n_embd, HS = m_cfg.head_size, BT = B * T;
    ops::crossentropy_backward(m_kc, pr, a.dlogits, a.logits, tokens, offsets, B, T, V);
    pr.barrier("backward reads dlogits");
    if (m_cfg.kind == ModelKind::Bigram) {
        ops::embedding_backward(m_kc, pr, g(0), m_dummy, a.dlogits, tokens, offsets, B, T, V, V, false);
        return;
    }
    ops::matmul_backward(m_kc, pr, a.dy, g(3), g(4), a.dlogits, a.y, p(3), a.logits, BT, V, HS, true, false, true, false);
    pr.barrier("attention backward reads dy");
    ops::attention_backward(m_kc, pr, a.dqkv, a.dpre, a.dy, a.qkv, a.att, B, T, 1, HS);
    pr.barrier("qkv projection backward reads dqkv");
    ops::matmul_backward(m_kc, pr, a.dx, g(2), m_dummy, a.dqkv, a.x, p(2), a.qkv, BT, 3 * HS, C, false, false, true, false);
    pr.barrier("embedding backward reads dx");
    ops::embedding_backward(m_kc, pr, g(0), g(1), a.dx, tokens, offsets, B, T, C, V, true);
}

void Model::record_update(Program& pr, const Buffer& hyper) {
    ops::adamw(m_kc, pr, params, grads, adam_m, adam_v, hyper, uint32_t(m_flat));
}

}  // namespace attn
