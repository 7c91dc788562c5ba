// Exact GELU, elementwise: the activation of nanoGPT's MLP (x * Phi(x), PyTorch's nn.GELU()).
#pragma once
#include "vk/program.h"

namespace attn::ops {

struct GeluPush { uint32_t n; };

// out (n) = gelu(inp)
inline void gelu_forward(KernelCache& kc, Program& pr, BufferRange out, BufferRange inp, uint32_t n) {
    GeluPush p{n};
    pr.dispatch(kc.get("gelu_forward", 2, sizeof p), {inp, out}, p, n);
}

// dinp (n) = dout * gelu'(inp), inp the forward's input
inline void gelu_backward(KernelCache& kc, Program& pr, BufferRange dinp, BufferRange dout, BufferRange inp, uint32_t n) {
    GeluPush p{n};
    pr.dispatch(kc.get("gelu_backward", 3, sizeof p), {dout, inp, dinp}, p, n);
}

}  // namespace attn::ops
