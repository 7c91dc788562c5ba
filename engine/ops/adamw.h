// AdamW over the whole flat parameter buffer in one dispatch; with data parallelism it also averages the replicas'
// gradients first (the all-reduce).
#pragma once
#include "vk/program.h"

namespace attn::ops {

constexpr uint32_t k_max_replicas = 8;

struct AdamWPush {
    uint32_t n;             // vec4s in one gradient
    uint32_t replicas = 1;  // gradients side by side in `grads`
    uint32_t pad0 = 0, pad1 = 0;
    float weight[k_max_replicas] = {};  // slice r's share of the batch's rows (sum 1), replicas > 1
};
static_assert(sizeof(AdamWPush) == 48);

// What the host writes into the hyperparameter buffer before each step (adamw.comp's uniform block: two vec4s).
struct AdamWHyper { float lr, beta1, beta2, eps, weight_decay, bc1, bc2, unused = 0; };
static_assert(sizeof(AdamWHyper) == 32);

// n floats, a multiple of 4 (buffers padded). grads: (n,), or with replicas R > 1 (R, n): the gradients of the
// batch's R slices (each a mean over its own rows); the update uses sum_r weights[r] * grads[r], summed in slice
// order (every replica computes the same bits).
inline void adamw(KernelCache& kc, Program& pr, BufferRange params, BufferRange grads, BufferRange m, BufferRange v,
                  BufferRange hyper, uint32_t n, uint32_t replicas = 1, const float* weights = nullptr) {
    if (n % 4 != 0) throw Error("internal error: AdamW needs a multiple of 4 parameters (pad the buffer)");
    if (replicas < 1 || replicas > k_max_replicas || (replicas > 1 && !weights))
        throw Error("internal error: AdamW averages 1 to 8 replicas' gradients, with their weights");
    AdamWPush p{n / 4, replicas};
    for (uint32_t r = 0; r < replicas && replicas > 1; r++) p.weight[r] = weights[r];
    pr.dispatch(kc.get("adamw", "vvvvusss", sizeof p), {params, grads, m, v, hyper, params, m, v}, p, n / 4);
}

}  // namespace attn::ops
