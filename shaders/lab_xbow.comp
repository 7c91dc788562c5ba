#version 450
// Lab, the lecture's version 1: xbow[b,t] = mean(x[b, 0..t]) with a literal loop over the past ("bag of words").
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };      // (B, T, C)
layout(std430, binding = 1) writeonly buffer Xb { float xbow[]; }; // (B, T, C)
layout(push_constant) uniform P { uint B, T, C; } p;
void main() {
    uint i = gid();
    if (i >= p.B * p.T * p.C) return;
    uint c = i % p.C, t = (i / p.C) % p.T, b = i / (p.T * p.C);
    float s = 0.0;
    for (uint t2 = 0; t2 <= t; t2++) s += x[(b * p.T + t2) * p.C + c];
    xbow[i] = s / float(t + 1);
}
