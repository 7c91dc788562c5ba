#version 450
// matmul backward, the GPU kernel for dinp (K % 4 == 0, N % 4 == 0): dinp(M,K) (= or +=) dpre(M,N) @ w(N,K),
// dpre = dout, masked by out > 0 when the forward applied ReLU. One 128x128 tile of dinp per workgroup of 256
// (shaders/common/gemm_smem.glsl: C = dinp, A = dpre, B = w^T, l = n). See matmul_backward_dw_smem for dw, dbias.
#extension GL_GOOGLE_include_directive : require
layout(binding = 0) uniform samplerBuffer dout4;                      // (M, N/4) vec4
layout(binding = 1) uniform samplerBuffer w4;                         // (N, K/4) vec4
layout(binding = 2) uniform samplerBuffer out4;                       // (M, N/4) vec4: forward output (relu)
layout(std430, binding = 3) buffer Dinp { float dinp[]; };            // (M, K)
layout(push_constant) uniform P { uint M, N, K, relu, accumulate; } p;
uint m0, k0;
vec4 load_a(uint r, uint l) {  // dpre[m0 + r][l .. l+3]; rows clamped: computed, not stored
    if (l >= p.N) return vec4(0.0);
    int idx = int(min(m0 + r, p.M - 1) * (p.N / 4) + l / 4);
    vec4 d = texelFetch(dout4, idx);
    if (p.relu != 0) d *= vec4(greaterThan(texelFetch(out4, idx), vec4(0.0)));
    return d;
}
vec4 load_b(uint c, uint l) {  // w[l][k0 + c .. k0 + c + 3]
    return l < p.N && k0 + c < p.K ? texelFetch(w4, int(l * (p.K / 4) + (k0 + c) / 4)) : vec4(0.0);
}
void store(uint r, uint c, float s) {
    uint m = m0 + r, k = k0 + c;
    if (m >= p.M || k >= p.K) return;
    uint o = m * p.K + k;
    dinp[o] = p.accumulate != 0 ? dinp[o] + s : s;
}
#define A_DIRECT 0
#define B_DIRECT 1
#include "gemm_smem.glsl"

void main() {
    uint wg = group_index(), tiles_k = (p.K + TILE - 1) / TILE;
    if (wg >= ((p.M + TILE - 1) / TILE) * tiles_k) return;  // the whole workgroup: no barrier is skipped by some
    m0 = (wg / tiles_k) * TILE;
    k0 = (wg % tiles_k) * TILE;
    gemm(0, p.N);
    gemm_store();
}
