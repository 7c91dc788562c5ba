// AdamW over the whole flat parameter buffer in one dispatch.
#pragma once
#include "vk/program.h"

namespace attn::ops {

struct AdamWPush { uint32_t n; };
static_assert(sizeof(AdamWPush) == 4);

// What the host writes into the hyperparameter buffer before each step (matches adamw.comp: two vec4 texels).
struct AdamWHyper { float lr, beta1, beta2, eps, weight_decay, bc1, bc2, unused = 0; };
static_assert(sizeof(AdamWHyper) == 32);

// n floats, a multiple of 4 (buffers padded)
inline void adamw(KernelCache& kc, Program& pr, BufferRange params, BufferRange grads, BufferRange m, BufferRange v,
                  BufferRange hyper, uint32_t n) {
    if (n % 4 != 0) throw Error("internal error: AdamW needs a multiple of 4 parameters (pad the buffer)");
    AdamWPush p{n / 4};
    pr.dispatch(kc.get("adamw", "vvvvvsss", sizeof p), {params, grads, m, v, hyper, params, m, v}, p, n / 4);
}

}  // namespace attn::ops
