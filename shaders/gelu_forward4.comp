#version 450
// Vec4 path of gelu_forward (n % 4 == 0, aligned offsets): out = gelu(inp), inp read as RGBA32F texels.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "gelu.glsl"
layout(binding = 0) uniform samplerBuffer inp4;                      // (n/4,) vec4
layout(std430, binding = 1) writeonly buffer Out { vec4 out4[]; };  // (n/4,)
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint i4 = gid();
    if (i4 < p.n / 4) out4[i4] = gelu(texelFetch(inp4, int(i4)));
}
