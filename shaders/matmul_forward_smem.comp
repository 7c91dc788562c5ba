#version 450
// out(M,N) = inp(M,K) @ w(N,K)^T + bias(N), optional ReLU, optional residual(M,N) added last: the GPU kernel
// (K % 4 == 0), one 128x128 tile of out per workgroup of 256 (shaders/common/gemm_smem.glsl: C = out,
// A = inp, B = w, l = k). CPU devices (lavapipe) keep matmul_forward_tiled: barriers cost more there than
// shared memory saves. On an NVIDIA H200 (attn_bench_matmul 16384): 22-27 TFLOP/s for the gpt preset's layers,
// against 3 with the tiled kernel and 10-12 with 64x64 tiles per workgroup of 64.
#extension GL_GOOGLE_include_directive : require
layout(binding = 0) uniform samplerBuffer inp4;                       // (M, K/4) vec4
layout(binding = 1) uniform samplerBuffer w4;                         // (N, K/4) vec4
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };   // (N,)
layout(std430, binding = 3) writeonly buffer Out { float outp[]; };   // (M, N)
layout(std430, binding = 4) readonly buffer Res { float res[]; };     // (M, N)
layout(push_constant) uniform P { uint M, N, K, has_bias, relu, has_residual; } p;
uint m0, n0, K4;
vec4 load_a(uint r, uint l) {  // inp[m0 + r][l .. l+3]; rows clamped: computed, not stored
    return l < p.K ? texelFetch(inp4, int(min(m0 + r, p.M - 1) * K4 + l / 4)) : vec4(0.0);
}
vec4 load_b(uint c, uint l) {  // w[n0 + c][l .. l+3]
    return l < p.K ? texelFetch(w4, int(min(n0 + c, p.N - 1) * K4 + l / 4)) : vec4(0.0);
}
void store(uint r, uint c, float s) {
    uint m = m0 + r, n = n0 + c;
    if (m >= p.M || n >= p.N) return;
    s += p.has_bias != 0 ? bias[n] : 0.0;
    if (p.relu != 0) s = max(s, 0.0);
    if (p.has_residual != 0) s += res[m * p.N + n];
    outp[m * p.N + n] = s;
}
#define A_DIRECT 0
#define B_DIRECT 0
#include "gemm_smem.glsl"

void main() {
    uint wg = group_index(), tiles_n = (p.N + TILE - 1) / TILE;
    if (wg >= ((p.M + TILE - 1) / TILE) * tiles_n) return;  // the whole workgroup: no barrier is skipped by some
    m0 = (wg / tiles_n) * TILE;
    n0 = (wg % tiles_n) * TILE;
    K4 = p.K / 4;
    gemm(0, p.K);
    gemm_store();
}
