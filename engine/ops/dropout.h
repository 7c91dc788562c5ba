// Dropout with a counter-based (Philox) mask: seeded, reproducible, regenerated in backward, off in evaluation.
#pragma once
#include "ops/vec4.h"
#include "vk/program.h"

namespace attn::ops {

struct DropoutPush { uint32_t n, site, has_residual; float prob; };
static_assert(sizeof(DropoutPush) == 16);
struct DropoutBackPush { uint32_t n, site; float prob; };
static_assert(sizeof(DropoutBackPush) == 12);


// out (n) = residual + dropout(x); residual optional. seed holds this step's uvec2 key.
inline void dropout_forward(KernelCache& kc, Program& pr, BufferRange out, BufferRange x, BufferRange residual,
                            BufferRange seed, uint32_t n, uint32_t site, float prob) {
    DropoutPush p{n, site, residual.buffer != nullptr, prob};
    BufferRange res = residual.buffer ? residual : x;
    uint32_t add = kflag::pick(residual.buffer != nullptr, kflag::add);
    if (vec4_views(kc.context(), n, {out, x, res}))  // the same bits, four values a fetch and a store
        pr.dispatch(kc.get("dropout_forward4", "vvss", sizeof p, 0, add), {x, res, out, seed}, p, n / 4);
    else
        pr.dispatch(kc.get("dropout_forward", 4, sizeof p, add), {x, res, out, seed}, p, (uint64_t(n) + 3) / 4);  // 4 a thread
}

// dx (n) = dout * mask / (1 - p)
inline void dropout_backward(KernelCache& kc, Program& pr, BufferRange dx, BufferRange dout, BufferRange seed,
                             uint32_t n, uint32_t site, float prob) {
    DropoutBackPush p{n, site, prob};
    if (vec4_views(kc.context(), n, {dx, dout}))
        pr.dispatch(kc.get("dropout_backward4", "vss", sizeof p), {dout, dx, seed}, p, n / 4);
    else
        pr.dispatch(kc.get("dropout_backward", 3, sizeof p), {dout, dx, seed}, p, (uint64_t(n) + 3) / 4);
}

}  // namespace attn::ops
