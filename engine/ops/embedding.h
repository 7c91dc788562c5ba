// Token + position embedding: forward gathers rows, backward scatters gradients (no atomics).
#pragma once
#include <algorithm>

#include "vk/program.h"

namespace attn::ops {

struct EmbeddingPush { uint32_t B, T, C, use_pos; };
static_assert(sizeof(EmbeddingPush) == 16);
struct EmbeddingBackPush { uint32_t B, T, C, V, use_pos, accumulate, v0 = 0; };  // dwte's rows v0 .. v0+V-1
static_assert(sizeof(EmbeddingBackPush) == 28);

// out (B,T,C) = wte[tokens[offsets[b]+t]] + wpe[t]
inline void embedding_forward(KernelCache& kc, Program& pr, BufferRange out, BufferRange tokens, BufferRange offsets,
                              BufferRange wte, BufferRange wpe, uint32_t B, uint32_t T, uint32_t C, bool use_pos) {
    EmbeddingPush p{B, T, C, use_pos ? 1u : 0u};
    if (C % 4 == 0) {  // rows as vec4 texels: ~3x faster on lavapipe
        // the shape as specialisation constant 0 (T, C/4 in 16 bits each): its divisions become multiplications
        uint32_t shape = T < 65536 && C / 4 < 65536 ? T | (C / 4) << 16 : 0;
        pr.dispatch(kc.get("embedding_forward4", "ssvvs", sizeof p, shape, kflag::pick(use_pos, kflag::pos)),
                    {tokens, offsets, wte, wpe, out}, p, uint64_t(B) * T * C / 4);
    } else {
        pr.dispatch(kc.get("embedding_forward", 5, sizeof p, kflag::pick(use_pos, kflag::pos)), {tokens, offsets, wte, wpe, out},
                    p, uint64_t(B) * T * C);
    }
}

// dwte (V,C), dwpe (T,C) from dout (B,T,C); both are overwritten, or with accumulate dwte is added to (a tied
// lm_head's gradient already there).
inline void embedding_backward(KernelCache& kc, Program& pr, BufferRange dwte, BufferRange dwpe, BufferRange dout,
                               BufferRange tokens, BufferRange offsets, uint32_t B, uint32_t T, uint32_t C, uint32_t V,
                               bool use_pos, bool accumulate = false) {
    // a wide vocabulary is zeroed by a fill, not by each invocation's loop over V (on a CPU driver an invocation's
    // loops stop after 65535 iterations in all: V rows zeroed plus B*T rows summed would pass that)
    if (!accumulate && V > 4096) {
        pr.barrier("dwte: earlier reads of the gradient before it is cleared");
        pr.fill_zero(*dwte.buffer, dwte.offset, size_t(V) * C * sizeof(float));
        pr.barrier("dwte cleared before the sums add to it");
        accumulate = true;
    }
    // A vocabulary whose gradient passes the device's storage-binding limit (GPT-2's 50257 x 768 is 148 MiB, lavapipe
    // binds 128) is summed in row ranges of dwte, a dispatch each (every range walks the whole batch and adds the
    // rows whose token is its own: the same sums in the same order). dwpe comes with the first.
    uint64_t rows = kc.context().policy().rows_per_binding(uint64_t(C) * 4);
    bool vec4 = C % 4 == 0;  // four columns an invocation, dout as vec4 texels: ~2x faster on lavapipe
    const Kernel& k = vec4 ? kc.get("embedding_backward4", "ssvss", sizeof(EmbeddingBackPush))
                           : kc.get("embedding_backward", 5, sizeof(EmbeddingBackPush));
    uint32_t cols = vec4 ? C / 4 : C;
    for (uint64_t v0 = 0; v0 < V; v0 += rows) {
        uint32_t n = uint32_t(std::min<uint64_t>(rows, V - v0));
        bool pos = use_pos && v0 == 0;
        EmbeddingBackPush p{B, T, C, n, pos ? 1u : 0u, accumulate ? 1u : 0u, uint32_t(v0)};
        BufferRange part = n == V ? dwte : BufferRange(*dwte.buffer, dwte.offset + v0 * C * 4, size_t(n) * C * 4);
        pr.dispatch(k, {tokens, offsets, dout, part, dwpe}, p, uint64_t(cols) * (1 + (pos ? T : 0)));
    }
}

}  // namespace attn::ops
