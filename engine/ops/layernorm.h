// LayerNorm over channels (PyTorch's, eps 1e-5): forward keeps (mean, rstd) per row for backward.
// C % 4 == 0 takes the vec4 texel kernels (layernorm_*4.comp), other widths the plain ones.
#pragma once
#include "vk/program.h"

namespace attn::ops {

struct LayerNormPush { uint32_t N, C; };
static_assert(sizeof(LayerNormPush) == 8);
struct LayerNormBackPush { uint32_t N, C, accumulate; };
static_assert(sizeof(LayerNormBackPush) == 12);

// out (N,C), stats (N,2) from inp (N,C), w (C), b (C)
inline void layernorm_forward(KernelCache& kc, Program& pr, BufferRange out, BufferRange stats, BufferRange inp,
                              BufferRange w, BufferRange b, uint32_t N, uint32_t C) {
    LayerNormPush p{N, C};
    if (C % 4 == 0) {  // rows as vec4 texels: vector gathers on lavapipe
        pr.dispatch(kc.get("layernorm_forward4", "vvvss", sizeof p), {inp, w, b, out, stats}, p, N);
        return;
    }
    pr.dispatch(kc.get("layernorm_forward", 5, sizeof p), {inp, w, b, out, stats}, p, N);
}

// dinp (N,C) (= or +=), dw (C) =, db (C) = from dout (N,C)
inline void layernorm_backward(KernelCache& kc, Program& pr, BufferRange dinp, BufferRange dw, BufferRange db,
                               BufferRange dout, BufferRange inp, BufferRange w, BufferRange stats, uint32_t N,
                               uint32_t C, bool accumulate) {
    LayerNormBackPush p{N, C, accumulate};
    if (C % 4 == 0) {
        pr.dispatch(kc.get("layernorm_backward4", "vvvssss", sizeof p), {dout, inp, w, stats, dinp, dw, db}, p,
                    uint64_t(N) + C / 4);
        return;
    }
    pr.dispatch(kc.get("layernorm_backward", 7, sizeof p), {dout, inp, w, stats, dinp, dw, db}, p, uint64_t(N) + C);
}

}  // namespace attn::ops
