#version 450
// Vec4 fast path of dropout_backward (n % 4 == 0, aligned offsets): dx = dout * mask / (1 - p), the same bits, dout
// read as RGBA32F texels and dx stored as vec4s.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "philox.glsl"
layout(binding = 0) uniform samplerBuffer dout4;                       // (n/4,) vec4
layout(std430, binding = 1) writeonly buffer Dx { vec4 dx4[]; };       // (n/4,)
layout(std430, binding = 2) readonly buffer Seed { uvec2 key; };
layout(push_constant) uniform P { uint n, site; float prob; } p;
void main() {
    uint i4 = gid();
    if (i4 >= p.n / 4) return;
    bvec4 keep = dropout_keep4(key, p.site, i4, p.prob);
    dx4[i4] = mix(vec4(0.0), texelFetch(dout4, int(i4)) / (1.0 - p.prob), keep);
}
