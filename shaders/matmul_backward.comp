#version 450
// Backward of out = inp @ w^T + bias, in one dispatch with three index ranges:
//   [0, M*K)            dinp(M,K)  = dout(M,N) @ w(N,K)        (+= dinp when accumulate: residual streams)
//   [M*K, M*K+N*K)      dw(N,K)    = dout^T(N,M) @ inp(M,K)
//   [.., +N)            dbias(N)   = sum_m dout(M,N)
// When relu is set, out was ReLU'd and `outp` holds it: dout is masked by out > 0 first.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(std430, binding = 0) readonly buffer Dout { float dout[]; };   // (M, N)
layout(std430, binding = 1) readonly buffer Inp { float inp[]; };     // (M, K)
layout(std430, binding = 2) readonly buffer W { float w[]; };         // (N, K)
layout(std430, binding = 3) readonly buffer Outp { float outp[]; };   // (M, N) forward output (for relu)
layout(std430, binding = 4) buffer Dinp { float dinp[]; };            // (M, K)
layout(std430, binding = 5) writeonly buffer Dw { float dw[]; };      // (N, K)
layout(std430, binding = 6) writeonly buffer Db { float db[]; };      // (N,)
// invocations first .. first+count-1 of the whole job (dinp tiles, then dw tiles, then dbias): a big job is
// dispatched in two parts, dinp and the rest, so that each part's cost is known (segmented programs)
layout(push_constant) uniform P { uint M, N, K, has_bias, relu, want_dinp, accumulate, first, count; } p;
float g(uint m, uint n) {
    float d = dout[m * p.N + n];
    if (p.relu != 0 && outp[m * p.N + n] <= 0.0) d = 0.0;
    return d;
}
void main() {
    uint i = gid();
    if (i >= p.count) return;
    i += p.first;
    uint nin = p.want_dinp != 0 ? p.M * p.K : 0;
    if (i < nin) {
        uint m = i / p.K, k = i % p.K;
        float s = 0.0;
        for (uint n = 0; n < p.N; n++) s += g(m, n) * w[n * p.K + k];
        dinp[i] = p.accumulate != 0 ? dinp[i] + s : s;
        return;
    }
    i -= nin;
    if (i < p.N * p.K) {
        uint n = i / p.K, k = i % p.K;
        float s = 0.0;
        for (uint m = 0; m < p.M; m++) s += g(m, n) * inp[m * p.K + k];
        dw[i] = s;
        return;
    }
    i -= p.N * p.K;
    if (p.has_bias != 0 && i < p.N) {
        float s = 0.0;
        for (uint m = 0; m < p.M; m++) s += g(m, i);
        db[i] = s;
    }
}
