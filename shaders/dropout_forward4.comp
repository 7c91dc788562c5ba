#version 450
// Vec4 fast path of dropout_forward (n % 4 == 0, aligned offsets): the same Philox block per 4 elements and the
// same arithmetic, so the same bits (tests/test_dropout.cpp checks it); x and the residual read as RGBA32F texels, the
// output stored as a vec4 (on a CPU driver scalar storage loads and stores are a loop over the lanes each).
//   out = residual + x * mask / (1 - p)
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "philox.glsl"
#include "flags.glsl"
layout(binding = 0) uniform samplerBuffer x4;                          // (n/4,) vec4
layout(binding = 1) uniform samplerBuffer res4;                        // (n/4,) vec4
layout(std430, binding = 2) writeonly buffer Out { vec4 out4[]; };     // (n/4,)
layout(std430, binding = 3) readonly buffer Seed { uvec2 key; };
layout(push_constant) uniform P { uint n, site, has_residual; float prob; } p;
void main() {
    uint i4 = gid();
    if (i4 >= p.n / 4) return;
    bvec4 keep = dropout_keep4(key, p.site, i4, p.prob);
    vec4 v = mix(vec4(0.0), texelFetch(x4, int(i4)) / (1.0 - p.prob), keep);  // a select per element
    out4[i4] = F_ADD && p.has_residual != 0 ? texelFetch(res4, int(i4)) + v : v;
}
