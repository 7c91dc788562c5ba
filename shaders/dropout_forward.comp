#version 450
// out = residual + dropout(x): x * mask / (1 - p), mask ~ Bernoulli(1 - p) from Philox(seed, site, index).
// has_residual = 0 gives plain dropout. The seed changes every step (read from a buffer: no re-recording).
// One invocation per 4 elements: one Philox block gives their 4 numbers (shaders/common/philox.glsl).
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "philox.glsl"
#include "flags.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };          // (n,)
layout(std430, binding = 1) readonly buffer Res { float res[]; };      // (n,)
layout(std430, binding = 2) writeonly buffer Out { float outp[]; };    // (n,)
layout(std430, binding = 3) readonly buffer Seed { uvec2 key; };
layout(push_constant) uniform P { uint n, site, has_residual; float prob; } p;
void one(uint i, bool keep) {
    if (i >= p.n) return;
    float v = keep ? x[i] / (1.0 - p.prob) : 0.0;
    outp[i] = F_ADD && p.has_residual != 0 ? res[i] + v : v;
}
void main() {
    uint i4 = gid();
    if (i4 >= (p.n + 3) / 4) return;
    bvec4 keep = dropout_keep4(key, p.site, i4, p.prob);
    one(4 * i4, keep.x);
    one(4 * i4 + 1, keep.y);
    one(4 * i4 + 2, keep.z);
    one(4 * i4 + 3, keep.w);
}
