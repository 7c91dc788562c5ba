// AdamW over the whole flat parameter buffer in one dispatch.
#pragma once
#include "vk/program.h"

namespace attn::ops {

struct AdamWPush { uint32_t n; };
static_assert(sizeof(AdamWPush) == 4);

// What the host writes into the hyperparameter buffer before each step (matches adamw.comp).
struct AdamWHyper { float lr, beta1, beta2, eps, weight_decay, bc1, bc2; };
static_assert(sizeof(AdamWHyper) == 28);

inline void adamw(KernelCache& kc, Program& pr, BufferRange params, BufferRange grads, BufferRange m, BufferRange v,
                  BufferRange hyper, uint32_t n) {
    AdamWPush p{n};
    pr.dispatch(kc.get("adamw", 5, sizeof p), {params, grads, m, v, hyper}, p, n);
}

}  // namespace attn::ops
