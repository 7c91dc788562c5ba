// Softmax cross-entropy against next-token targets read straight from the GPU token stream.
#pragma once
#include <algorithm>
#include <numeric>
#include <string>

#include "vk/program.h"

namespace attn::ops {

// row strides (floats, >= V): ld dlogits, lld logits; rows row0 .. row0+rows-1 of the B*T (the bound range)
struct CrossEntropyPush { uint32_t B, T, V, ld, lld, row0 = 0, rows = 0; };
static_assert(sizeof(CrossEntropyPush) == 28);
struct MeanPush { uint32_t n, slot; };
static_assert(sizeof(MeanPush) == 8);

// Vocabularies wider than this take shaders/crossentropy_rows.comp (a workgroup a row, each invocation V/64 columns)
// instead of one invocation a row looping over all V: no invocation loops more than about 3 V / 64 times (a CPU
// driver's loop limit), and a GPU spreads a wide row over many lanes. The lecture's (65) keep their kernels' bits.
constexpr uint32_t k_wide_vocab = 4096;

// Rows of logits (lld floats each) and dlogits (ld) one range binds: within the device's binding limit, every
// range's start aligned in both and in the losses (a float a row).
inline uint64_t ce_rows(const Context& ctx, uint32_t ld, uint32_t lld) {
    const KernelPolicy& pol = ctx.policy();
    uint64_t m = std::lcm(pol.align_rows(4), std::lcm(pol.align_rows(uint64_t(ld) * 4), pol.align_rows(uint64_t(lld) * 4)));
    return pol.rows_per_binding(uint64_t(std::max(ld, lld)) * 4, m);
}

// An output of the cross-entropy kernels: its buffer and its floats a row (losses 1, dlogits ld).
struct CeOut {
    BufferRange r;
    uint32_t width;
};

// Runs one of the kernels below over the B*T rows: one dispatch, or, where the logits or their gradient pass the
// device's storage-binding limit (GPT-2's vocabulary x 1024 positions: 197 MiB, lavapipe binds 128), one a range
// of rows, each binding its rows of logits and of the outputs (every row is computed on its own: the same bits).
// Kernels of 4 bindings take `a`, of 5 `a` then `b`; `per_row`: invocations a row.
inline void crossentropy_dispatch(KernelCache& kc, Program& pr, const Kernel& k, BufferRange logits, BufferRange tokens,
                                  BufferRange offsets, CeOut a, CeOut b, CrossEntropyPush p, uint32_t per_row) {
    uint64_t n = uint64_t(p.B) * p.T;
    uint64_t step = ce_rows(kc.context(), p.ld, p.lld);
    for (uint64_t r0 = 0; r0 < n; r0 += step) {
        uint64_t rows = std::min(step, n - r0);
        p.row0 = uint32_t(r0);
        p.rows = uint32_t(rows);
        auto at = [&](BufferRange r, uint32_t width) {  // one dispatch: the buffers bound as they were given
            return rows == n ? r : BufferRange(*r.buffer, r.offset + r0 * width * 4, size_t(rows) * width * 4);
        };
        BufferRange lg = at(logits, p.lld), ra = at(a.r, a.width), rb = at(b.r, b.width);
        double cost = 4.0 * double(rows) * p.V;
        if (k.bindings() == 4) pr.dispatch(k, {lg, tokens, offsets, ra}, p, rows * per_row, cost);
        else pr.dispatch(k, {lg, tokens, offsets, ra, rb}, p, rows * per_row, cost);
    }
}

// The wide kernel: mode 1 losses, 2 dlogits, 3 both (an unused output is bound to the used one's range).
inline void crossentropy_rows(KernelCache& kc, Program& pr, uint32_t mode, BufferRange losses, BufferRange dlogits,
                              BufferRange logits, BufferRange tokens, BufferRange offsets, const CrossEntropyPush& p) {
    const Kernel& k = kc.get("crossentropy_rows", std::string(5, 's'), sizeof p, mode);
    CeOut l{losses, 1}, d{dlogits, p.ld};
    crossentropy_dispatch(kc, pr, k, logits, tokens, offsets, mode == 2 ? d : l, mode == 1 ? l : d, p, 64);
}

// losses (B,T) from logits (B,T,V) in rows of lld >= V floats (0: V, the padding is not read; lm_head writes
// padded rows, see matmul_forward); target of (b,t) is tokens[offsets[b]+t+1]
inline void crossentropy_forward(KernelCache& kc, Program& pr, BufferRange losses, BufferRange logits,
                                 BufferRange tokens, BufferRange offsets, uint32_t B, uint32_t T, uint32_t V,
                                 uint32_t lld = 0) {
    CrossEntropyPush p{B, T, V, V, lld ? lld : V};
    if (V > k_wide_vocab) return crossentropy_rows(kc, pr, 1, losses, losses, logits, tokens, offsets, p);
    CeOut l{losses, 1};
    crossentropy_dispatch(kc, pr, kc.get("crossentropy_forward", 4, sizeof p), logits, tokens, offsets, l, l, p, 1);
}

// dlogits (B,T,ld) of the mean loss: rows of ld >= V floats (0: V), the columns past V written as 0 (a row
// stride that is a multiple of 4 lets lm_head's backward read dlogits four at a time, see ops/matmul.h); logits
// rows of lld floats as in crossentropy_forward
inline void crossentropy_backward(KernelCache& kc, Program& pr, BufferRange dlogits, BufferRange logits,
                                  BufferRange tokens, BufferRange offsets, uint32_t B, uint32_t T, uint32_t V,
                                  uint32_t ld = 0, uint32_t lld = 0) {
    CrossEntropyPush p{B, T, V, ld ? ld : V, lld ? lld : V};
    if (V > k_wide_vocab) return crossentropy_rows(kc, pr, 2, dlogits, dlogits, logits, tokens, offsets, p);
    CeOut d{dlogits, p.ld};
    crossentropy_dispatch(kc, pr, kc.get("crossentropy_backward", 4, sizeof p), logits, tokens, offsets, d, d, p, 1);
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
    const Kernel& k = vec4 ? kc.get("crossentropy_fused4", "vssss", sizeof p) : kc.get("crossentropy_fused", "tssss", sizeof p);
    crossentropy_dispatch(kc, pr, k, logits, tokens, offsets, {losses, 1}, {dlogits, p.ld}, p, 1);
}

// result[slot] = mean(values[0..n)), result[slot+1] = 1 if any is NaN/Inf
inline void mean_forward(KernelCache& kc, Program& pr, BufferRange result, BufferRange values, uint32_t n,
                         uint32_t slot) {
    MeanPush p{n, slot};
    pr.dispatch(kc.get("mean_forward", 2, sizeof p), {values, result}, p, 1);
}

}  // namespace attn::ops
