#version 450
// out[r,:] = (x[r,:] - mean) * rstd * w + b, eps 1e-5 (PyTorch's LayerNorm); mean and rstd kept for backward.
// One invocation per row: rows of 32-384 channels are faster serial than cooperative on lavapipe.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(std430, binding = 0) readonly buffer Inp { float inp[]; };    // (N, C)
layout(std430, binding = 1) readonly buffer W { float w[]; };        // (C,)
layout(std430, binding = 2) readonly buffer Bv { float bias[]; };    // (C,)
layout(std430, binding = 3) writeonly buffer Out { float outp[]; };  // (N, C)
layout(std430, binding = 4) writeonly buffer Stats { vec2 stats[]; };// (N,) mean, rstd
layout(push_constant) uniform P { uint N, C; } p;
void main() {
    uint r = gid();
    if (r >= p.N) return;
    uint o = r * p.C;
    float m = 0.0;
    for (uint c = 0; c < p.C; c++) m += inp[o + c];
    m /= float(p.C);
    float v = 0.0;
    for (uint c = 0; c < p.C; c++) { float d = inp[o + c] - m; v += d * d; }
    float rstd = inversesqrt(v / float(p.C) + 1e-5);
    for (uint c = 0; c < p.C; c++) outp[o + c] = (inp[o + c] - m) * rstd * w[c] + bias[c];
    stats[r] = vec2(m, rstd);
}
