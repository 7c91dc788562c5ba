// Exact GELU, elementwise: the activation of nanoGPT's MLP (x * Phi(x), PyTorch's nn.GELU()).
#pragma once
#include "ops/vec4.h"
#include "vk/program.h"

namespace attn::ops {

struct GeluPush { uint32_t n; };

// out (n) = gelu(inp)
inline void gelu_forward(KernelCache& kc, Program& pr, BufferRange out, BufferRange inp, uint32_t n) {
    GeluPush p{n};
    if (vec4_views(kc.context(), n, {inp, out}))  // four a fetch and a store: the same bits, ~3x faster on lavapipe
        pr.dispatch(kc.get("gelu_forward4", "vs", sizeof p), {inp, out}, p, n / 4);
    else
        pr.dispatch(kc.get("gelu_forward", 2, sizeof p), {inp, out}, p, n);
}

// dinp (n) = dout * gelu'(inp), inp the forward's input
inline void gelu_backward(KernelCache& kc, Program& pr, BufferRange dinp, BufferRange dout, BufferRange inp, uint32_t n) {
    GeluPush p{n};
    if (vec4_views(kc.context(), n, {dout, inp, dinp}))
        pr.dispatch(kc.get("gelu_backward4", "vvs", sizeof p), {dout, inp, dinp}, p, n / 4);
    else
        pr.dispatch(kc.get("gelu_backward", 3, sizeof p), {dout, inp, dinp}, p, n);
}

}  // namespace attn::ops
