// Softmax cross-entropy against next-token targets read straight from the GPU token stream.
#pragma once
#include "vk/program.h"

namespace attn::ops {

struct CrossEntropyPush { uint32_t B, T, V, ld, lld; };  // row strides (floats, >= V): ld dlogits, lld logits
static_assert(sizeof(CrossEntropyPush) == 20);
struct MeanPush { uint32_t n, slot; };
static_assert(sizeof(MeanPush) == 8);

// Vocabularies wider than this take shaders/crossentropy_rows.comp (a workgroup a row, each invocation V/64 columns)
// instead of one invocation a row looping over all V: no invocation loops more than about 3 V / 64 times (a CPU
// driver's loop limit), and a GPU spreads a wide row over many lanes. The lecture's (65) keep their kernels' bits.
constexpr uint32_t k_wide_vocab = 4096;

// The wide kernel: mode 1 losses, 2 dlogits, 3 both (unused outputs are bound but never written).
inline void crossentropy_rows(KernelCache& kc, Program& pr, uint32_t mode, BufferRange losses, BufferRange dlogits,
                              BufferRange logits, BufferRange tokens, BufferRange offsets, const CrossEntropyPush& p) {
    pr.dispatch(kc.get("crossentropy_rows", std::string(5, 's'), sizeof p, mode), {logits, tokens, offsets, losses, dlogits},
                p, uint64_t(p.B) * p.T * 64, 4.0 * double(p.B) * p.T * p.V);
}

// losses (B,T) from logits (B,T,V) in rows of lld >= V floats (0: V, the padding is not read; lm_head writes
// padded rows, see matmul_forward); target of (b,t) is tokens[offsets[b]+t+1]
inline void crossentropy_forward(KernelCache& kc, Program& pr, BufferRange losses, BufferRange logits,
                                 BufferRange tokens, BufferRange offsets, uint32_t B, uint32_t T, uint32_t V,
                                 uint32_t lld = 0) {
    CrossEntropyPush p{B, T, V, V, lld ? lld : V};
    if (V > k_wide_vocab) return crossentropy_rows(kc, pr, 1, losses, losses, logits, tokens, offsets, p);
    pr.dispatch(kc.get("crossentropy_forward", 4, sizeof p), {logits, tokens, offsets, losses}, p, uint64_t(B) * T);
}

// dlogits (B,T,ld) of the mean loss: rows of ld >= V floats (0: V), the columns past V written as 0 (a row
// stride that is a multiple of 4 lets lm_head's backward read dlogits four at a time, see ops/matmul.h); logits
// rows of lld floats as in crossentropy_forward
inline void crossentropy_backward(KernelCache& kc, Program& pr, BufferRange dlogits, BufferRange logits,
                                  BufferRange tokens, BufferRange offsets, uint32_t B, uint32_t T, uint32_t V,
                                  uint32_t ld = 0, uint32_t lld = 0) {
    CrossEntropyPush p{B, T, V, ld ? ld : V, lld ? lld : V};
    if (V > k_wide_vocab) return crossentropy_rows(kc, pr, 2, dlogits, dlogits, logits, tokens, offsets, p);
    pr.dispatch(kc.get("crossentropy_backward", 4, sizeof p), {logits, tokens, offsets, dlogits}, p, uint64_t(B) * T);
}

// Both at once for a training step (shaders/crossentropy_fused.comp): losses (B,T) and dlogits (B,T,V) of the
// mean loss, the same values as the two kernels above with one softmax and one dispatch fewer (dlogits rows of
// ld floats and logits rows of lld as in crossentropy_backward). Rows of both padded to a multiple of 4 floats at
// 16-byte offsets (lm_head's, see Activations::logits_ld): shaders/crossentropy_fused4.comp, the same bits, four
// values a fetch and a store.
inline void crossentropy_fused(KernelCache& kc, Program& pr, BufferRange losses, BufferRange dlogits,
                               BufferRange logits, BufferRange tokens, BufferRange offsets, uint32_t B, uint32_t T,
                               uint32_t V, uint32_t ld = 0, uint32_t lld = 0) {
    CrossEntropyPush p{B, T, V, ld ? ld : V, lld ? lld : V};
    if (V > k_wide_vocab) return crossentropy_rows(kc, pr, 3, losses, dlogits, logits, tokens, offsets, p);
    bool vec4 = p.ld % 4 == 0 && p.lld % 4 == 0 && logits.offset % 16 == 0 && dlogits.offset % 16 == 0;
    pr.dispatch(vec4 ? kc.get("crossentropy_fused4", "vssss", sizeof p) : kc.get("crossentropy_fused", "tssss", sizeof p),
                {logits, tokens, offsets, losses, dlogits}, p, uint64_t(B) * T);
}

// result[slot] = mean(values[0..n)), result[slot+1] = 1 if any is NaN/Inf
inline void mean_forward(KernelCache& kc, Program& pr, BufferRange result, BufferRange values, uint32_t n,
                         uint32_t slot) {
    MeanPush p{n, slot};
    pr.dispatch(kc.get("mean_forward", 2, sizeof p), {values, result}, p, 1);
}

}  // namespace attn::ops
