// Data parallelism's all-reduce (Trainer's replicas): the batch's gradient from the gradients of its slices.
#pragma once
#include "vk/program.h"

namespace attn::ops {

constexpr uint32_t k_max_replicas = 8;

struct GradMeanPush {
    uint32_t n;         // vec4s in one gradient
    uint32_t replicas;  // R: slices side by side in the input
    uint32_t pad0 = 0, pad1 = 0;
    float weight[k_max_replicas];  // slice r's share of the batch's rows (sum 1)
};
static_assert(sizeof(GradMeanPush) == 48);

// all: (R, n) the R slices' gradients (each a mean over its own rows), out: (n,) = sum_r weight[r] * all[r],
// summed in slice order (every replica computes the same bits). n floats, a multiple of 4 (padded buffers).
inline void grad_mean(KernelCache& kc, Program& pr, BufferRange all, BufferRange out, uint32_t n, uint32_t replicas,
                      const float* weights) {
    if (n % 4 != 0) throw Error("internal error: grad_mean needs a multiple of 4 floats (pad the buffer)");
    if (replicas < 1 || replicas > k_max_replicas) throw Error("internal error: grad_mean takes 1 to 8 replicas");
    GradMeanPush p{n / 4, replicas};
    for (uint32_t r = 0; r < replicas; r++) p.weight[r] = weights[r];
    pr.dispatch(kc.get("grad_mean", "vs", sizeof p), {all, out}, p, n / 4);
}

}  // namespace attn::ops
