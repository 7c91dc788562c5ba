// LayerNorm over channels (PyTorch's, eps 1e-5): forward keeps (mean, rstd) per row for backward.
// C % 4 == 0 takes the vec4 texel kernels (layernorm_*4.comp), other widths the plain ones.
#pragma once
#include <cstdlib>
#include <string>

#include "ops/reduce.h"
#include "vk/program.h"

namespace attn::ops {

struct LayerNormPush { uint32_t N, C; };
static_assert(sizeof(LayerNormPush) == 8);
struct LayerNormBackPush { uint32_t N, C, accumulate, splits = 1, stride = 0, db_off = 0; };
static_assert(sizeof(LayerNormBackPush) == 24);

// layernorm_forward4's specialisation constant: C / 4 where a row fits in registers (C <= 256: each element fetched
// once instead of 3 times, the same bits; the small GPT's rows, 256 x 64 on lavapipe, one thread, best of 100:
// 0.032 -> 0.023 ms), else 1. ATTN_LAYERNORM_ROWS=memory keeps the row in texels (tests compare the two). The
// backward's dinp the same way measured 0.067 -> 0.064 ms and did not keep its bits (its sums compile differently).
inline uint32_t layernorm_c4r(uint32_t C) {
    if (const char* e = std::getenv("ATTN_LAYERNORM_ROWS"); e && std::string(e) == "memory") return 1;
    return C <= 256 ? C / 4 : 1;
}

// out (N,C), stats (N,2) from inp (N,C), w (C), b (C)
inline void layernorm_forward(KernelCache& kc, Program& pr, BufferRange out, BufferRange stats, BufferRange inp,
                              BufferRange w, BufferRange b, uint32_t N, uint32_t C) {
    LayerNormPush p{N, C};
    if (C % 4 == 0) {  // rows as vec4 texels: vector gathers on lavapipe
        pr.dispatch(kc.get("layernorm_forward4", "vvvss", sizeof p, layernorm_c4r(C)), {inp, w, b, out, stats}, p, N);
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
inline void layernorm_backward(KernelCache& kc, Program& pr, BufferRange dinp, BufferRange dw, BufferRange db,
                               BufferRange dout, BufferRange inp, BufferRange w, BufferRange stats, uint32_t N,
                               uint32_t C, bool accumulate, BufferRange scratch = {}, uint32_t splits = 1) {
    LayerNormBackPush p{N, C, accumulate};
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
        // stats and (for +=) dinp's old values read as texels too: on lavapipe, one thread, N 256 C 64 with +=, best
        // of 200: 0.069 -> 0.056 ms (the same bits)
        pr.dispatch(kc.get("layernorm_backward4", "vvvtsssv", sizeof p, 0, kflag::pick(accumulate, kflag::add)),
                    {dout, inp, w, stats, dinp, dw_out, db_out, dinp},
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
