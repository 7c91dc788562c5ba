// Masked multi-head self-attention (all heads of all batch elements in one dispatch) and its backward.
#pragma once
#include "vk/program.h"

namespace attn::ops {

struct AttentionPush { uint32_t B, T, NH, HS, causal; };
static_assert(sizeof(AttentionPush) == 20);
struct AttentionBackPush { uint32_t B, T, NH, HS, phase; };
static_assert(sizeof(AttentionBackPush) == 20);

// out (B,T,NH*HS), att (B,NH,T,T) from qkv (B,T,3*NH*HS)
inline void attention_forward(KernelCache& kc, Program& pr, BufferRange out, BufferRange att, BufferRange qkv,
                              uint32_t B, uint32_t T, uint32_t NH, uint32_t HS, bool causal = true) {
    AttentionPush p{B, T, NH, HS, causal};
    pr.dispatch(kc.get("attention_forward", 3, sizeof p), {qkv, att, out}, p, uint64_t(B) * NH * T);
}

// dqkv (B,T,3C) from dout (B,T,C); dpre (B,NH,T,T) is scratch.
inline void attention_backward(KernelCache& kc, Program& pr, BufferRange dqkv, BufferRange dpre, BufferRange dout,
                               BufferRange qkv, BufferRange att, uint32_t B, uint32_t T, uint32_t NH, uint32_t HS) {
    const Kernel& k = kc.get("attention_backward", 5, sizeof(AttentionBackPush));
    AttentionBackPush p{B, T, NH, HS, 0};
    pr.dispatch(k, {dout, qkv, att, dpre, dqkv}, p, uint64_t(B) * NH * T);
    pr.barrier("phase 1 reads every row of dpre written by phase 0");
    p.phase = 1;
    pr.dispatch(k, {dout, qkv, att, dpre, dqkv}, p, uint64_t(B) * T * 3 * NH * HS);
}

}  // namespace attn::ops
