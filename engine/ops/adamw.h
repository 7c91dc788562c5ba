// AdamW over the whole flat parameter buffer in one dispatch; with data parallelism it also averages the replicas'
// gradients first (the all-reduce). grad_norm: the gradient's global norm and the clipping scale it sets.
#pragma once
#include <algorithm>
#include <string>

#include "vk/program.h"

namespace attn::ops {

constexpr uint32_t k_max_replicas = 8;

struct AdamWPush {
    uint32_t n;             // vec4s in one gradient
    uint32_t replicas = 1;  // gradients side by side in `grads`
    uint32_t decay_end = 0; // vec4s before this are weight-decayed, the rest not (nanoGPT: 1-D tensors)
    uint32_t parts = 0;     // grad_norm: its partial sums, ceil(n / 8)
    float weight[k_max_replicas] = {};  // slice r's share of the batch's rows (sum 1), replicas > 1
};
static_assert(sizeof(AdamWPush) == 48);

// What the host writes into the hyperparameter buffer before each step (adamw.comp's uniform block: two vec4s).
// grad_clip: the largest gradient norm (0: no clipping), read by grad_norm.
struct AdamWHyper { float lr, beta1, beta2, eps, weight_decay, bc1, bc2, grad_clip = 0; };
static_assert(sizeof(AdamWHyper) == 32);

inline AdamWPush adamw_push(uint32_t n, uint32_t decay_end, uint32_t replicas, const float* weights) {
    if (n % 4 != 0 || decay_end % 4 != 0 || decay_end > n)
        throw Error("internal error: AdamW needs a multiple of 4 parameters (pad the buffer)");
    if (replicas < 1 || replicas > k_max_replicas || (replicas > 1 && !weights))
        throw Error("internal error: AdamW averages 1 to 8 replicas' gradients, with their weights");
    AdamWPush p{n / 4, replicas, decay_end / 4};
    for (uint32_t r = 0; r < replicas && replicas > 1; r++) p.weight[r] = weights[r];
    return p;
}

// n floats, a multiple of 4 (buffers padded); the first decay_end of them are weight-decayed. grads: (n,), or with
// replicas R > 1 (R, n): the gradients of the batch's R slices (each a mean over its own rows); the update uses
// sum_r weights[r] * grads[r], summed in slice order (every replica computes the same bits), times clip[0] (the
// clipping scale grad_norm wrote, or 1).
// Parameters past the device's storage-binding limit (KernelPolicy::max_storage_range: 128 MiB on lavapipe, GPT-2
// 124M's are 498 MB) are updated in several dispatches, each on a range of at most that size (the same bits: every
// element is updated on its own).
inline void adamw(KernelCache& kc, Program& pr, BufferRange params, BufferRange grads, BufferRange m, BufferRange v,
                  BufferRange hyper, BufferRange clip, uint32_t n, uint32_t decay_end, uint32_t replicas = 1,
                  const float* weights = nullptr) {
    const Kernel& k = kc.get("adamw", "vvvvuusss", sizeof(AdamWPush));
    uint64_t chunk = kc.context().policy().rows_per_binding(4, 4);  // floats, whole vec4s
    if (chunk >= n) {
        AdamWPush p = adamw_push(n, decay_end, replicas, weights);
        pr.dispatch(k, {params, grads, m, v, hyper, clip, params, m, v}, p, n / 4);
        return;
    }
    if (replicas > 1)  // the slices' gradients are (R, n): a range of each would need a stride the kernel lacks
        throw Error("a model of " + std::to_string(uint64_t(n) * 4 >> 20) + " MiB of parameters trains on one device "
                    "here, not " + std::to_string(replicas) + " (the device's binding limit): run with --replicas 1");
    for (uint64_t c0 = 0; c0 < n; c0 += chunk) {
        uint32_t cn = uint32_t(std::min<uint64_t>(chunk, n - c0));
        uint32_t decay = uint32_t(std::clamp<int64_t>(int64_t(decay_end) - int64_t(c0), 0, cn));
        AdamWPush p = adamw_push(cn, decay, 1, nullptr);
        auto at = [&](BufferRange r) { return BufferRange(*r.buffer, r.offset + c0 * 4, size_t(cn) * 4); };
        pr.dispatch(k, {at(params), at(grads), at(m), at(v), hyper, clip, at(params), at(m), at(v)}, p, cn / 4);
    }
}

// grad_norm's partial sums for n floats: one for every 8 vec4s
constexpr uint32_t grad_norm_parts(uint32_t n) { return (n / 4 + 7) / 8; }

// clip (4,) = {scale, norm, 0, 0}: the global L2 norm of the gradient (as adamw reads it: grads, or the weighted mean of
// R slices) and scale = min(1, grad_clip / (norm + 1e-6)) as torch.nn.utils.clip_grad_norm_, or 1 when hyper's
// grad_clip is 0. Two dispatches: grad_norm_parts(n) partial sums of squares into parts, then their sum.
inline void grad_norm(KernelCache& kc, Program& pr, BufferRange clip, BufferRange parts, BufferRange grads,
                      BufferRange hyper, uint32_t n, uint32_t replicas = 1, const float* weights = nullptr) {
    AdamWPush p = adamw_push(n, n, replicas, weights);
    p.parts = grad_norm_parts(n);
    pr.dispatch(kc.get("grad_norm", "vs", sizeof p), {grads, parts}, p, p.parts);
    pr.barrier("the sum reads the partial sums");
    pr.dispatch(kc.get("grad_norm_finish", "ssu", sizeof p), {parts, clip, hyper}, p, WORKGROUP);
}

}  // namespace attn::ops
