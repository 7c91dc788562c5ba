#version 450
// Vec4 path of gelu_backward (n % 4 == 0, aligned offsets): dinp = dout * gelu'(inp), both read as RGBA32F texels.
// dinp may be dout itself (the model's in-place backward): each invocation reads its own vec4 before it writes it.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "gelu.glsl"
layout(binding = 0) uniform samplerBuffer dout4;                      // (n/4,) vec4
layout(binding = 1) uniform samplerBuffer inp4;                       // (n/4,) vec4
layout(std430, binding = 2) writeonly buffer Dinp { vec4 dinp4[]; };  // (n/4,)
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint i4 = gid();
    if (i4 < p.n / 4) dinp4[i4] = texelFetch(dout4, int(i4)) * gelu_grad(texelFetch(inp4, int(i4)));
}
