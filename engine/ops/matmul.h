// Linear layer: out = inp @ w^T + bias (optional ReLU); backward computes dinp, dw, dbias in one dispatch
// (two in a segmented program).
#pragma once
#include "vk/program.h"

namespace attn::ops {

struct MatmulPush { uint32_t M, N, K, has_bias, relu, has_residual; };
static_assert(sizeof(MatmulPush) == 24);
struct MatmulBackPush { uint32_t M, N, K, has_bias, relu, want_dinp, accumulate, first = 0, count = 0; };
static_assert(sizeof(MatmulBackPush) == 36);

// K % 4 == 0 takes the tiled texel-buffer kernels; other shapes the plain ones (same results).
inline bool matmul_tiled(uint32_t K) { return K % 4 == 0; }

// out (M,N) = inp (M,K) @ w (N,K)^T + bias (N), then ReLU when relu, then + residual (M,N) when given
inline void matmul_forward(KernelCache& kc, Program& pr, BufferRange out, BufferRange inp, BufferRange w,
                           BufferRange bias, uint32_t M, uint32_t N, uint32_t K, bool has_bias, bool relu = false,
                           BufferRange residual = {}) {
    MatmulPush p{M, N, K, has_bias, relu, residual.buffer != nullptr};
    BufferRange res = residual.buffer ? residual : bias;  // any valid binding when unused
    if (matmul_tiled(K)) {
        uint64_t tiles = uint64_t((M + 7) / 8) * ((N + 7) / 8);
        pr.dispatch(kc.get("matmul_forward_tiled", "vvsss", sizeof p), {inp, w, bias, out, res}, p, tiles,
                    double(M) * N * K);
        return;
    }
    pr.dispatch(kc.get("matmul_forward", 5, sizeof p), {inp, w, bias, out, res}, p, uint64_t(M) * N, double(M) * N * K);
}

// dinp (M,K) (= or +=), dw (N,K) =, dbias (N) =. `out` is the forward output, read only when relu.
inline void matmul_backward(KernelCache& kc, Program& pr, BufferRange dinp, BufferRange dw, BufferRange dbias,
                            BufferRange dout, BufferRange inp, BufferRange w, BufferRange out, uint32_t M, uint32_t N,
                            uint32_t K, bool has_bias, bool relu, bool want_dinp, bool accumulate) {
    MatmulBackPush p{M, N, K, has_bias, relu, want_dinp, accumulate};
    const Kernel* k;
    std::initializer_list<BufferRange> bufs = {dout, inp, w, relu ? out : dout, dinp, dw, dbias};  // out read only when relu
    uint64_t n_dinp, n_rest;  // invocations: dinp part, then dw and dbias
    if (matmul_tiled(K)) {
        // tiles per invocation as in shaders/common/matmul_backward_tiled.glsl: dinp TRI x 4*TKI, dw TRW x 4*TKW
        uint64_t TRI = N % 4 == 0 ? 8 : 4, TKI = 2, TRW = N % 4 == 0 ? 8 : 4, TKW = N % 4 == 0 ? 4 : 2;
        n_dinp = want_dinp ? (M + TRI - 1) / TRI * ((K / 4 + TKI - 1) / TKI) : 0;
        n_rest = (N + TRW - 1) / TRW * ((K / 4 + TKW - 1) / TKW) + (has_bias ? N : 0);
        k = N % 4 == 0 ? &kc.get("matmul_backward_tiled4", "vvvvsss", sizeof p)  // dout as vec4 too
                       : &kc.get("matmul_backward_tiled", "tvvtsss", sizeof p);
    } else {
        n_dinp = want_dinp ? uint64_t(M) * K : 0;
        n_rest = uint64_t(N) * K + (has_bias ? N : 0);
        k = &kc.get("matmul_backward", 7, sizeof p);
    }
    double macs = double(M) * N * K;
    if (!pr.segmented()) {  // one dispatch: fewest dispatches for small models
        p.count = uint32_t(n_dinp + n_rest);
        pr.dispatch(*k, bufs, p, n_dinp + n_rest, macs * (want_dinp ? 2 : 1));
        return;
    }
    // two dispatches, dinp (cost M*N*K) and dw + dbias (cost M*N*K): each part's workgroups cost alike
    if (n_dinp) {
        p.count = uint32_t(n_dinp);
        pr.dispatch(*k, bufs, p, n_dinp, macs);
    }
    p.first = uint32_t(n_dinp);
    p.count = uint32_t(n_rest);
    pr.dispatch(*k, bufs, p, n_rest, macs);
}

}  // namespace attn::ops
