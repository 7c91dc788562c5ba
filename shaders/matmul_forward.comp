#version 450
// out(M,N) = inp(M,K) @ w(N,K)^T + bias(N)   (PyTorch's Linear), optional ReLU after,
// optional residual(M,N) added last: a block's `x + proj(...)` in one pass.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(std430, binding = 0) readonly buffer Inp { float inp[]; };   // (M, K)
layout(std430, binding = 1) readonly buffer W { float w[]; };       // (N, K)
layout(std430, binding = 2) readonly buffer Bias { float bias[]; }; // (N,)
layout(std430, binding = 3) writeonly buffer Out { float outp[]; }; // (M, N)
layout(std430, binding = 4) readonly buffer Res { float res[]; }; // (M, N)
layout(push_constant) uniform P { uint M, N, K, has_bias, relu, has_residual; } p;
void main() {
    uint i = gid();
    if (i >= p.M * p.N) return;
    uint m = i / p.N, n = i % p.N;
    float s = p.has_bias != 0 ? bias[n] : 0.0;
    uint a = m * p.K, bw = n * p.K;
    for (uint k = 0; k < p.K; k++) s += inp[a + k] * w[bw + k];
    if (p.relu != 0) s = max(s, 0.0);
    if (p.has_residual != 0) s += res[i];
    outp[i] = s;
}
