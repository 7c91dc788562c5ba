#version 450
// dwte[v,c] = sum over (b,t) with token v of dx[b,t,c]; dwpe[t,c] = sum_b dx[b,t,c].
// Invocation c owns column c of dwte and walks the batch in order: no float atomics, bit-reproducible,
// and B*T*C work instead of V*B*T*C.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(std430, binding = 0) readonly buffer Tokens { uint tokens[]; };   // (N_tokens,)
layout(std430, binding = 1) readonly buffer Offsets { uint offsets[]; }; // (B,)
layout(std430, binding = 2) readonly buffer Dout { float dout[]; };      // (B, T, C)
layout(std430, binding = 3) buffer Dwte { float dwte[]; };               // (V, C) from row v0
layout(std430, binding = 4) writeonly buffer Dwpe { float dwpe[]; };     // (T, C)
// dwte bound from row v0: its V rows are tokens v0 .. v0+V-1, the other tokens' sums another dispatch's
layout(push_constant) uniform P { uint B, T, C, V, use_pos, accumulate, v0; } p;
void main() {
    uint i = gid();
    if (i < p.C) {
        uint c = i;
        if (p.accumulate == 0u)  // else add to what is there (a tied lm_head's gradient)
            for (uint v = 0; v < p.V; v++) dwte[v * p.C + c] = 0.0;
        for (uint b = 0; b < p.B; b++) {
            uint base = offsets[b];
            for (uint t = 0; t < p.T; t++) {
                uint row = tokens[base + t] - p.v0;  // wraps past V for tokens before v0
                if (row < p.V) dwte[row * p.C + c] += dout[(b * p.T + t) * p.C + c];
            }
        }
        return;
    }
    i -= p.C;
    if (p.use_pos == 0 || i >= p.T * p.C) return;
    float s = 0.0;
    for (uint b = 0; b < p.B; b++) s += dout[b * p.T * p.C + i];
    dwpe[i] = s;
}
