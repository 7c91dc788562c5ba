// GELU, elementwise: exact (x * Phi(x), PyTorch's nn.GELU(): nanoGPT's MLP) or its tanh form (nn.GELU('tanh'): GPT-2's
// "gelu_new", as Hugging Face and llm.c run it), the form a pipeline specialisation (shaders/common/gelu.glsl).
#pragma once
#include "ops/vec4.h"
#include "vk/program.h"

namespace attn::ops {

struct GeluPush { uint32_t n; };

// out (n) = gelu(inp); tanh_form: the tanh approximation
inline void gelu_forward(KernelCache& kc, Program& pr, BufferRange out, BufferRange inp, uint32_t n,
                         bool tanh_form = false) {
    GeluPush p{n};
    const uint32_t spec = tanh_form ? 2u : 1u;  // gelu.glsl's GELU_FORM
    if (vec4_views(kc.context(), n, {inp, out}))  // four a fetch and a store: the same bits, ~3x faster on lavapipe
        pr.dispatch(kc.get("gelu_forward4", "vs", sizeof p, spec), {inp, out}, p, n / 4);
    else
        pr.dispatch(kc.get("gelu_forward", "ss", sizeof p, spec), {inp, out}, p, n);
}

// dinp (n) = dout * gelu'(inp), inp the forward's input; tanh_form as gelu_forward's
inline void gelu_backward(KernelCache& kc, Program& pr, BufferRange dinp, BufferRange dout, BufferRange inp, uint32_t n,
                          bool tanh_form = false) {
    GeluPush p{n};
    const uint32_t spec = tanh_form ? 2u : 1u;
    if (vec4_views(kc.context(), n, {dout, inp, dinp}))
        pr.dispatch(kc.get("gelu_backward4", "vvs", sizeof p, spec), {dout, inp, dinp}, p, n / 4);
    else
        pr.dispatch(kc.get("gelu_backward", "sss", sizeof p, spec), {dout, inp, dinp}, p, n);
}

}  // namespace attn::ops
