// Masked multi-head self-attention (all heads of all batch elements in one dispatch) and its backward.
#pragma once
#include "vk/program.h"

namespace attn::ops {

struct AttentionPush { uint32_t B, T, NH, HS, causal, site; float prob; };
static_assert(sizeof(AttentionPush) == 28);
struct AttentionBackPush { uint32_t B, T, NH, HS, phase, site; float prob; };
static_assert(sizeof(AttentionBackPush) == 28);

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
    pr.dispatch(kc.get("attention_forward", "tsss", sizeof p), {qkv, att, out, drop.seed}, p, uint64_t(B) * NH * T);
}

// dqkv (B,T,3C) from dout (B,T,C); dpre (B,NH,T,T) is scratch.
inline void attention_backward(KernelCache& kc, Program& pr, BufferRange dqkv, BufferRange dpre, BufferRange dout,
                               BufferRange qkv, BufferRange att, uint32_t B, uint32_t T, uint32_t NH, uint32_t HS,
                               const AttnDropout& drop) {
    const Kernel& k = kc.get("attention_backward", "tttssst", sizeof(AttentionBackPush));
    AttentionBackPush p{B, T, NH, HS, 0, drop.site, drop.prob};
    pr.dispatch(k, {dout, qkv, att, dpre, dqkv, drop.seed, dpre}, p, uint64_t(B) * NH * T);
    pr.barrier("phase 1 reads every row of dpre written by phase 0");
    p.phase = 1;
    pr.dispatch(k, {dout, qkv, att, dpre, dqkv, drop.seed, dpre}, p, uint64_t(B) * T * 3 * NH * HS);
}

}  // namespace attn::ops
