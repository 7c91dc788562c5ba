// Masked multi-head self-attention (all heads of all batch elements in one dispatch) and its backward.
#pragma once
#include "vk/program.h"

namespace attn::ops {

struct AttentionPush { uint32_t B, T, NH, HS, causal, site; float prob; };
static_assert(sizeof(AttentionPush) == 28);
struct AttentionBackPush { uint32_t B, T, NH, HS, phase, site; float prob; uint32_t causal; };
static_assert(sizeof(AttentionBackPush) == 32);

// Head sizes that are a multiple of 4 (up to 128) take the vec4 kernels (attention_*4.comp): each texel
// fetch feeds 4 multiply-adds. Other head sizes take the scalar ones; both match the CPU reference.
inline bool attention_vec4(uint32_t HS) { return HS % 4 == 0 && HS <= 128; }

// Dropout on the attention weights: probability, Philox site id, and the buffer holding this step's key.
struct AttnDropout {
    float prob = 0;
    uint32_t site = 0;
    BufferRange seed;  // (uvec2,) must be bound even when prob = 0
};

// out (B,T,NH*HS), att (B,NH,T,T) from qkv (B,T,3*NH*HS)
inline void attention_forward(KernelCache& kc, Program& pr, BufferRange out, BufferRange att, BufferRange qkv,
                              uint32_t B, uint32_t T, uint32_t NH, uint32_t HS, bool causal, const AttnDropout& drop) {
    AttentionPush p{B, T, NH, HS, causal, drop.site, drop.prob};
    const char* name = attention_vec4(HS) ? "attention_forward4" : "attention_forward";
    // cost for segmented programs: q.k and att @ v (half masked when causal), x4 as these row-per-invocation
    // kernels do about a quarter of the tiled matmuls' multiply-adds per second
    double macs = 4.0 * B * NH * T * T * HS * (causal ? 0.5 : 1.0);
    // the vec4 kernel is specialised for HS/4 (constant_id 0): its loops unroll, q and the output row stay in registers
    pr.dispatch(attention_vec4(HS) ? kc.get(name, "vsss", sizeof p, HS / 4) : kc.get(name, "tsss", sizeof p), {qkv, att, out, drop.seed}, p,
                uint64_t(B) * NH * T, macs * 2);
}

// dqkv (B,T,3C) from dout (B,T,C); dpre (B,NH,T,T) is scratch. `causal` as in the forward.
inline void attention_backward(KernelCache& kc, Program& pr, BufferRange dqkv, BufferRange dpre, BufferRange dout,
                               BufferRange qkv, BufferRange att, uint32_t B, uint32_t T, uint32_t NH, uint32_t HS,
                               bool causal, const AttnDropout& drop) {
    bool v4 = attention_vec4(HS);
    const Kernel& k = v4 ? kc.get("attention_backward4", "vvtssst", sizeof(AttentionBackPush), HS / 4)
                         : kc.get("attention_backward", "tttssst", sizeof(AttentionBackPush));
    AttentionBackPush p{B, T, NH, HS, 0, drop.site, drop.prob, causal};
    double macs = 4.0 * B * NH * T * T * HS * (causal ? 0.5 : 1.0);  // per product, as in the forward
    pr.dispatch(k, {dout, qkv, att, dpre, dqkv, drop.seed, dpre}, p, uint64_t(B) * NH * T, macs);
    pr.barrier("phase 1 reads every row of dpre written by phase 0");
    p.phase = 1;
    // vec4: one invocation per head row of dq, dk or dv; scalar: one per element of dqkv
    pr.dispatch(k, {dout, qkv, att, dpre, dqkv, drop.seed, dpre}, p, uint64_t(B) * T * 3 * NH * (v4 ? 1 : HS), macs * 3);
}

}  // namespace attn::ops
