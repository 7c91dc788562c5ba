#version 450
// dinp (n) = dout * gelu'(inp): the forward's input is kept (B,T,4C in an MLP), its output is not needed.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "gelu.glsl"
layout(std430, binding = 0) readonly buffer Dout { float dout[]; };  // (n,)
layout(std430, binding = 1) readonly buffer Inp { float inp[]; };    // (n,)
layout(std430, binding = 2) writeonly buffer Dinp { float dinp[]; }; // (n,)
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint i = gid();
    if (i < p.n) dinp[i] = dout[i] * gelu_grad(inp[i]);
}
