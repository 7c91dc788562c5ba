#version 450
// Lab: c[b] (M,N) = scale * a[b] (M,K) @ b[b] (K,N), or @ b[b]^T with b (N,K) when trans_b: the lecture's
// `wei @ x` and `q @ k.transpose(-2, -1)`. A batch stride of 0 broadcasts that operand over the batch.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(std430, binding = 0) readonly buffer A { float a[]; };    // (batch, M, K) or (M, K)
layout(std430, binding = 1) readonly buffer Bm { float bm[]; };  // (batch, K, N) or (batch, N, K) when trans_b
layout(std430, binding = 2) writeonly buffer Cm { float c[]; };  // (batch, M, N)
layout(push_constant) uniform P { uint batch, M, N, K, a_stride, b_stride, trans_b; float scale; } p;
void main() {
    uint i = gid();
    if (i >= p.batch * p.M * p.N) return;
    uint n = i % p.N, m = (i / p.N) % p.M, bi = i / (p.M * p.N);
    uint a0 = bi * p.a_stride + m * p.K, b0 = bi * p.b_stride;
    float s = 0.0;
    for (uint k = 0; k < p.K; k++) s += a[a0 + k] * (p.trans_b != 0 ? bm[b0 + n * p.K + k] : bm[b0 + k * p.N + n]);
    c[i] = s * p.scale;
}
