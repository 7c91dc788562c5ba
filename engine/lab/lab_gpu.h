// Lab helpers: small matrices, uploads, and the record functions of the lab_* shaders.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "vk/program.h"

namespace attn::lab {

// A dense row-major matrix as the demos show it.
struct Matrix {
    int rows = 0, cols = 0;
    std::vector<float> v;  // (rows, cols)
    Matrix() = default;
    Matrix(int r, int c) : rows(r), cols(c), v(size_t(r) * c, 0.0f) {}
    Matrix(int r, int c, std::vector<float> values) : rows(r), cols(c), v(std::move(values)) {}
    float at(int r, int c) const { return v[size_t(r) * cols + c]; }
};

// A storage buffer holding `v` (at least 4 bytes, so empty inputs still bind).
template <typename T> Buffer to_gpu(Context& ctx, const std::vector<T>& v) {
    Buffer b(ctx, std::max<size_t>(v.size() * sizeof(T), 4));
    if (!v.empty()) b.upload(v);
    return b;
}
inline Buffer gpu_zeros(Context& ctx, size_t n_floats) {
    Buffer b(ctx, std::max<size_t>(n_floats * 4, 4));
    b.fill_zero();
    return b;
}

struct LabMatmulPush { uint32_t batch, M, N, K, a_stride, b_stride, trans_b; float scale; };
static_assert(sizeof(LabMatmulPush) == 32);
struct LabXbowPush { uint32_t B, T, C; };
static_assert(sizeof(LabXbowPush) == 12);
struct LabTrilPush { uint32_t T, mode; };
static_assert(sizeof(LabTrilPush) == 8);
struct LabSoftmaxPush { uint32_t rows, n, causal; float mult; };
static_assert(sizeof(LabSoftmaxPush) == 16);

enum class TrilMode : uint32_t { Ones = 0, Tril = 1, TrilAverage = 2, Zeros = 3 };

// c (batch,M,N) = scale * a (batch,M,K) @ b (batch,K,N), or @ b^T with b (batch,N,K); stride 0 broadcasts.
inline void matmul(KernelCache& kc, Program& pr, BufferRange c, BufferRange a, BufferRange b, uint32_t batch,
                   uint32_t M, uint32_t N, uint32_t K, uint32_t a_stride, uint32_t b_stride, bool trans_b,
                   float scale = 1.0f) {
    LabMatmulPush p{batch, M, N, K, a_stride, b_stride, trans_b ? 1u : 0u, scale};
    pr.dispatch(kc.get("lab_matmul", 3, sizeof p), {a, b, c}, p, uint64_t(batch) * M * N);
}
// xbow (B,T,C) = running mean of x (B,T,C) over time, by a loop over the past
inline void xbow(KernelCache& kc, Program& pr, BufferRange out, BufferRange x, uint32_t B, uint32_t T, uint32_t C) {
    LabXbowPush p{B, T, C};
    pr.dispatch(kc.get("lab_xbow", 2, sizeof p), {x, out}, p, uint64_t(B) * T * C);
}
// w (T,T) = ones, tril(ones), tril(ones)/rowsum or zeros
inline void tril(KernelCache& kc, Program& pr, BufferRange w, uint32_t T, TrilMode mode) {
    LabTrilPush p{T, uint32_t(mode)};
    pr.dispatch(kc.get("lab_tril", 1, sizeof p), {w}, p, uint64_t(T) * T);
}
// out (rows,n) = softmax(mult * s) row-wise; causal: rows of (n,n) matrices, future entries masked to -inf
inline void softmax(KernelCache& kc, Program& pr, BufferRange out, BufferRange s, uint32_t rows, uint32_t n,
                    bool causal, float mult) {
    LabSoftmaxPush p{rows, n, causal ? 1u : 0u, mult};
    pr.dispatch(kc.get("lab_softmax", 2, sizeof p), {s, out}, p, rows);
}

// Records with `record`, runs and waits.
template <typename F> void run_program(Context& ctx, F&& record) {
    Program pr(ctx);
    pr.begin();
    record(pr);
    pr.end();
    pr.run();
}

}  // namespace attn::lab
