// LayerNorm over channels (PyTorch's, eps 1e-5): forward keeps (mean, rstd) per row for backward.
// C % 4 == 0 takes the vec4 texel kernels (layernorm_*4.comp), other widths the plain ones.
#pragma once

#include "ops/reduce.h"
#include "vk/program.h"

namespace attn::ops {

struct LayerNormPush { uint32_t N, C; };
static_assert(sizeof(LayerNormPush) == 8);
struct LayerNormBackPush { uint32_t N, C, accumulate, splits = 1, stride = 0, db_off = 0, site = 0; float prob = 0; };
static_assert(sizeof(LayerNormBackPush) == 32);

// What layernorm_backward can also write (C % 4 == 0): dinp as dropout_backward would pass it back through the
// forward's dropout at `site` (out = dinp * mask / (1 - prob), the same bits), for the residual branch that reads the
// stream's gradient next, instead of a dropout_backward dispatch of its own.
struct LayerNormDropout {
    BufferRange out;   // (N, C), 16-byte aligned
    BufferRange seed;  // this step's key, as dropout_backward's
    uint32_t site = 0;
    float prob = 0;
};

// layernorm_forward4's specialisation constant: C / 4 where a row fits in registers (C <= 256: each element fetched
// once instead of 3 times, the same bits), else 1. The policy's layernorm_rows_in_registers false
// (ATTNLAB_LAYERNORM_ROWS=memory) keeps the row in texels (tests compare the two). The backward's dinp stays in
// texels: in registers it gained little and did not keep its bits (its sums compile differently; bench/RESULTS.md,
// "layernorm rows in registers").
inline uint32_t layernorm_c4r(const Context& ctx, uint32_t C) {
    if (!ctx.policy().layernorm_rows_in_registers) return 1;
    return C <= 256 ? C / 4 : 1;
}

// out (N,C), stats (N,2) from inp (N,C), w (C), b (C)
inline void layernorm_forward(KernelCache& kc, Program& pr, BufferRange out, BufferRange stats, BufferRange inp,
                              BufferRange w, BufferRange b, uint32_t N, uint32_t C) {
    LayerNormPush p{N, C};
    if (C % 4 == 0) {  // rows as vec4 texels: vector gathers on lavapipe
        pr.dispatch(kc.get("layernorm_forward4", "vvvss", sizeof p, layernorm_c4r(kc.context(), C)), {inp, w, b, out, stats}, p, N);
        return;
    }
    pr.dispatch(kc.get("layernorm_forward", 5, sizeof p), {inp, w, b, out, stats}, p, N);
}

// How many row ranges layernorm_backward's dw/db sums are split into on this device (1 for the plain kernel).
inline uint32_t layernorm_backward_splits(const Context& ctx, uint32_t N, uint32_t C) {
    return C % 4 == 0 ? row_splits(ctx, N, C / 4) : 1;
}
// Floats of scratch layernorm_backward needs for `splits` row ranges (0 when not split).
inline size_t layernorm_backward_scratch(uint32_t C, uint32_t splits) {
    return splits > 1 ? size_t(splits) * 2 * C : 0;
}

// dinp (N,C) (= or +=), dw (C) =, db (C) = from dout (N,C). splits > 1 (C % 4 == 0 only): the sums over rows
// behind dw and db are cut into that many row ranges written to `scratch`, then added up by a second pass.
// drop (C % 4 == 0 only, else an error): also drop->out = dropout_backward of the new dinp.
inline void layernorm_backward(KernelCache& kc, Program& pr, BufferRange dinp, BufferRange dw, BufferRange db,
                               BufferRange dout, BufferRange inp, BufferRange w, BufferRange stats, uint32_t N,
                               uint32_t C, bool accumulate, BufferRange scratch = {}, uint32_t splits = 1,
                               const LayerNormDropout* drop = nullptr) {
    LayerNormBackPush p{N, C, accumulate};
    bool dropping = drop && drop->prob > 0;
    if (dropping && (C % 4 != 0 || drop->out.offset % 16 != 0))
        throw Error("internal error: layernorm_backward's dropout needs C % 4 == 0 and a 16-byte aligned output");
    if (dropping) p.site = drop->site, p.prob = drop->prob;
    if (C % 4 == 0) {
        if (N < 2) splits = 1;
        if (splits > 1) {
            if (!scratch.buffer || scratch.size() < layernorm_backward_scratch(C, splits) * 4)
                throw Error("internal error: layernorm_backward split over rows without enough scratch");
            p.splits = splits;
            p.stride = 2 * C / 4;  // vec4s
            p.db_off = C / 4;
        }
        BufferRange dw_out = splits > 1 ? scratch : dw, db_out = splits > 1 ? scratch : db;
        // stats and (for +=) dinp's old values read as texels too: vector gathers on lavapipe (the same bits;
        // bench/RESULTS.md, "layernorm rows in registers")
        // with dropout: 8 dispatches fewer a small GPT step (each a pass over the stream's gradient)
        uint32_t flags = kflag::pick(accumulate, kflag::add) | kflag::pick(dropping, kflag::dropout);
        pr.dispatch(kc.get("layernorm_backward4", "vvvtsssvss", sizeof p, 0, flags),
                    {dout, inp, w, stats, dinp, dw_out, db_out, dinp, dropping ? drop->out : dinp,
                     dropping ? drop->seed : dinp},
                    p, uint64_t(N) + uint64_t(C / 4) * splits);
        if (splits > 1) {
            pr.barrier("add up dw's row ranges");
            reduce_splits(kc, pr, dw, db, scratch, C, C, splits, 2 * C);
        }
        return;
    }
    pr.dispatch(kc.get("layernorm_backward", 7, sizeof p, kflag::pick(accumulate, kflag::add)),
                {dout, inp, w, stats, dinp, dw, db}, p, uint64_t(N) + C);
}

}  // namespace attn::ops
