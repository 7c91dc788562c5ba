#version 450
// x[b,t,:] = wte[tokens[offsets[b]+t], :] + wpe[t, :]   (wpe only when use_pos)
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "flags.glsl"
layout(std430, binding = 0) readonly buffer Tokens { uint tokens[]; };   // (N_tokens,)
layout(std430, binding = 1) readonly buffer Offsets { uint offsets[]; }; // (B,)
layout(std430, binding = 2) readonly buffer Wte { float wte[]; };        // (V, C)
layout(std430, binding = 3) readonly buffer Wpe { float wpe[]; };        // (T_max, C)
layout(std430, binding = 4) writeonly buffer Out { float outp[]; };      // (B, T, C)
layout(push_constant) uniform P { uint B, T, C, use_pos; } p;
void main() {
    uint i = gid();
    if (i >= p.B * p.T * p.C) return;
    uint c = i % p.C, bt = i / p.C, t = bt % p.T, b = bt / p.T;
    uint tok = tokens[offsets[b] + t];
    float x = wte[tok * p.C + c];
    if (F_POS && p.use_pos != 0) x += wpe[t * p.C + c];
    outp[i] = x;
}
