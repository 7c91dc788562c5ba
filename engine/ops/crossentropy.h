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

// Runs one of the kernels below over the B*T rows: one dispatch, or, where the logits or their gradient pass the
// device's storage-binding limit (GPT-2's vocabulary x 1024 positions: 197 MiB, lavapipe binds 128), one a range
// of rows, each binding its rows of logits, losses and dlogits (every row is computed on its own: the same bits).
// `per_row`: invocations a row.
inline void crossentropy_dispatch(KernelCache& kc, Program& pr, const Kernel& k, BufferRange logits, BufferRange tokens,
                                  BufferRange offsets, BufferRange losses, BufferRange dlogits, CrossEntropyPush p,
                                  uint32_t per_row) {
    uint64_t n = uint64_t(p.B) * p.T;
    uint64_t step = ce_rows(kc.context(), p.ld, p.lld);
    auto at = [](BufferRange r, uint64_t row0, uint64_t rows, uint32_t width) {
        return rows == 0 ? r : BufferRange(*r.buffer, r.offset + row0 * width * 4, size_t(rows) * width * 4);
    };
    for (uint64_t r0 = 0; r0 < n; r0 += step) {
        uint64_t rows = std::min(step, n - r0);
        p.row0 = uint32_t(r0);
        p.rows = uint32_t(rows);
        bool whole = rows == n;  // one dispatch: the buffers bound as they were given
        pr.dispatch(k, {whole ? logits : at(logits, r0, rows, p.lld), tokens, offsets,
                        whole ? losses : at(losses, r0, rows, 1), whole ? dlogits : at(dlogits, r0, rows, p.ld)},
                    p, rows * per_row, 4.0 * double(rows) * p.V);
    }
}

// The wide kernel: mode 1 losses, 2 dlogits, 3 both (unused outputs are bound but never written: the same range
// as the used one).
inline void crossentropy_rows(KernelCache& kc, Program& pr, uint32_t mode, BufferRange losses, BufferRange dlogits,
                              BufferRange logits, BufferRange tokens, BufferRange offsets, const CrossEntropyPush& p) {
    CrossEntropyPush q = p;
    if (mode == 1) q.ld = 1;  // dlogits is the losses: rows of one float
    const Kernel& k = kc.get("crossentropy_rows", std::string(5, 's'), sizeof p, mode);
    if (mode == 2) {  // losses unused: bind dlogits' range there too
        crossentropy_dispatch(kc, pr, k, logits, tokens, offsets, dlogits, dlogits, q, 64);
        return;
    }
    crossentropy_dispatch(kc, pr, k, logits, tokens, offsets, losses, mode == 1 ? losses : dlogits, q, 64);
}

// losses (B,T) from logits (B,T,V) in rows of lld >= V floats (0: V, the padding is not read; lm_head writes
// padded rows, see matmul_forward); target of (b,t) is tokens[offsets[b]+t+1]
inline void crossentropy_forward(KernelCache& kc, Program& pr, BufferRange losses, BufferRange logits,
                                 BufferRange tokens, BufferRange offsets, uint32_t B, uint32_t T, uint32_t V,
                                 uint32_t lld = 0) {
    CrossEntropyPush p{B, T, V, 1, lld ? lld : V};
    if (V > k_wide_vocab) return crossentropy_rows(kc, pr, 1, losses, losses, logits, tokens, offsets, p);
    // the kernel's binding 3 is the losses; crossentropy_dispatch's fifth binding goes unused (the losses again)
    const Kernel& k = kc.get("crossentropy_forward", 4, sizeof p);
    uint64_t n = uint64_t(B) * T;
    uint64_t step = ce_rows(kc.context(), p.lld, p.lld);
    for (uint64_t r0 = 0; r0 < n; r0 += step) {
        uint64_t rows = std::min(step, n - r0);
        p.row0 = uint32_t(r0);
        p.rows = uint32_t(rows);
        bool whole = rows == n;
        BufferRange lg = whole ? logits : BufferRange(*logits.buffer, logits.offset + r0 * p.lld * 4, rows * p.lld * 4);
        BufferRange ls = whole ? losses : BufferRange(*losses.buffer, losses.offset + r0 * 4, rows * 4);
        pr.dispatch(k, {lg, tokens, offsets, ls}, p, rows);
    }
}

// dlogits (B,T,ld) of the mean loss: rows of ld >= V floats (0: V), the columns past V written as 0 (a row
// stride that is a multiple of 4 lets lm_head's backward read dlogits four at a time, see ops/matmul.h); logits
// rows of lld floats as in crossentropy_forward
inline void crossentropy_backward(KernelCache& kc, Program& pr, BufferRange dlogits, BufferRange logits,
                                  BufferRange tokens, BufferRange offsets, uint32_t B, uint32_t T, uint32_t V,
                                  uint32_t ld = 0, uint32_t lld = 0) {
    CrossEntropyPush p{B, T, V, ld ? ld : V, lld ? lld : V};
    if (V > k_wide_vocab) return crossentropy_rows(kc, pr, 2, dlogits, dlogits, logits, tokens, offsets, p);
    const Kernel& k = kc.get("crossentropy_backward", 4, sizeof p);
    uint64_t n = uint64_t(B) * T;
    uint64_t step = ce_rows(kc.context(), p.ld, p.lld);
    for (uint64_t r0 = 0; r0 < n; r0 += step) {
        uint64_t rows = std::min(step, n - r0);
        p.row0 = uint32_t(r0);
        p.rows = uint32_t(rows);
        bool whole = rows == n;
        BufferRange lg = whole ? logits : BufferRange(*logits.buffer, logits.offset + r0 * p.lld * 4, rows * p.lld * 4);
        BufferRange dl = whole ? dlogits : BufferRange(*dlogits.buffer, dlogits.offset + r0 * p.ld * 4, rows * p.ld * 4);
        pr.dispatch(k, {lg, tokens, offsets, dl}, p, rows);
    }
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
    crossentropy_dispatch(kc, pr, k, logits, tokens, offsets, losses, dlogits, p, 1);
}

// result[slot] = mean(values[0..n)), result[slot+1] = 1 if any is NaN/Inf
inline void mean_forward(KernelCache& kc, Program& pr, BufferRange result, BufferRange values, uint32_t n,
                         uint32_t slot) {
    MeanPush p{n, slot};
    pr.dispatch(kc.get("mean_forward", 2, sizeof p), {values, result}, p, 1);
}

}  // namespace attn::ops
