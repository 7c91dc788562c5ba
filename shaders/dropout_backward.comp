#version 450
// dx = dout * mask / (1 - p), the same Philox mask as dropout_forward; one invocation per 4 elements.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "philox.glsl"
layout(std430, binding = 0) readonly buffer Dout { float dout[]; };   // (n,)
layout(std430, binding = 1) writeonly buffer Dx { float dx[]; };      // (n,)
layout(std430, binding = 2) readonly buffer Seed { uvec2 key; };
layout(push_constant) uniform P { uint n, site; float prob; } p;
void one(uint i, bool keep) {
    if (i < p.n) dx[i] = keep ? dout[i] / (1.0 - p.prob) : 0.0;
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
