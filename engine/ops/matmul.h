// Linear layer: out = inp @ w^T + bias (optional ReLU); backward computes dinp, dw, dbias in one dispatch.
#pragma once
#include "vk/program.h"

namespace attn::ops {

struct MatmulPush { uint32_t M, N, K, has_bias, relu, has_residual; };
static_assert(sizeof(MatmulPush) == 24);
struct MatmulBackPush { uint32_t M, N, K, has_bias, relu, want_dinp, accumulate; };
static_assert(sizeof(MatmulBackPush) == 28);

// K % 4 == 0 takes the tiled texel-buffer kernels; other shapes the plain ones (same results).
inline bool matmul_tiled(uint32_t K) { return K % 4 == 0; }

// out (M,N) = inp (M,K) @ w (N,K)^T + bias (N), then ReLU when relu, then + residual (M,N) when given
inline void matmul_forward(KernelCache& kc, Program& pr, BufferRange out, BufferRange inp, BufferRange w,
                           BufferRange bias, uint32_t M, uint32_t N, uint32_t K, bool has_bias, bool relu = false,
                           BufferRange residual = {}) {
    MatmulPush p{M, N, K, has_bias, relu, residual.buffer != nullptr};
    BufferRange res = residual.buffer ? residual : bias;  // any valid binding when unused
    if (matmul_tiled(K)) {
        uint64_t tiles = uint64_t((M + 3) / 4) * ((N + 7) / 8);
        pr.dispatch(kc.get("matmul_forward_tiled", "vvsss", sizeof p), {inp, w, bias, out, res}, p, tiles);
        return;
    }
    pr.dispatch(kc.get("matmul_forward", 5, sizeof p), {inp, w, bias, out, res}, p, uint64_t(M) * N);
}

// dinp (M,K) (= or +=), dw (N,K) =, dbias (N) =. `out` is the forward output, read only when relu.
inline void matmul_backward(KernelCache& kc, Program& pr, BufferRange dinp, BufferRange dw, BufferRange dbias,
                            BufferRange dout, BufferRange inp, BufferRange w, BufferRange out, uint32_t M, uint32_t N,
                            uint32_t K, bool has_bias, bool relu, bool want_dinp, bool accumulate) {
    MatmulBackPush p{M, N, K, has_bias, relu, want_dinp, accumulate};
    if (matmul_tiled(K)) {
        uint64_t tiles_k = (K / 4 + 1) / 2;
        uint64_t n = (want_dinp ? uint64_t((M + 3) / 4) * tiles_k : 0) + uint64_t((N + 3) / 4) * tiles_k + (has_bias ? N : 0);
        BufferRange o = relu ? out : dout;  // read only when relu
        if (N % 4 == 0)  // dout as vec4 too
            pr.dispatch(kc.get("matmul_backward_tiled4", "vvvvsss", sizeof p), {dout, inp, w, o, dinp, dw, dbias}, p, n);
        else
            pr.dispatch(kc.get("matmul_backward_tiled", "tvvtsss", sizeof p), {dout, inp, w, o, dinp, dw, dbias}, p, n);
        return;
    }
    uint64_t n = (want_dinp ? uint64_t(M) * K : 0) + uint64_t(N) * K + (has_bias ? N : 0);
    pr.dispatch(kc.get("matmul_backward", 7, sizeof p), {dout, inp, w, out, dinp, dw, dbias}, p, n);
}

}  // namespace attn::ops
