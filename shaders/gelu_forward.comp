#version 450
// out (n) = gelu(inp): exact GELU, elementwise (the MLP of nanoGPT's blocks: c_fc -> GELU -> c_proj).
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "gelu.glsl"
layout(std430, binding = 0) readonly buffer Inp { float inp[]; };   // (n,)
layout(std430, binding = 1) writeonly buffer Out { float outp[]; }; // (n,)
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint i = gid();
    if (i < p.n) outp[i] = gelu(inp[i]);
}
