#version 450
// dx = dout * mask / (1 - p), the same Philox mask as dropout_forward.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "philox.glsl"
layout(std430, binding = 0) readonly buffer Dout { float dout[]; };   // (n,)
layout(std430, binding = 1) writeonly buffer Dx { float dx[]; };      // (n,)
layout(std430, binding = 2) readonly buffer Seed { uvec2 key; };
layout(push_constant) uniform P { uint n, site; float prob; } p;
void main() {
    uint i = gid();
    if (i >= p.n) return;
    dx[i] = dropout_keep(key, p.site, i, p.prob) ? dout[i] / (1.0 - p.prob) : 0.0;
}
