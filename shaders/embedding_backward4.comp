#version 450
// Vec4 path of embedding_backward for C % 4 == 0 (same sums in the same order, so the same bits):
//   dwte[v,:] = sum over (b,t) with token v of dx[b,t,:]      dwpe[t,:] = sum_b dx[b,t,:]
// Invocation c4 owns columns 4*c4 .. 4*c4+3 of dwte and walks the batch in order (no float atomics); then one
// invocation per (t, c4) of dwpe. dx is read as RGBA32F texels, dwte and dwpe written four at a time.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(std430, binding = 0) readonly buffer Tokens { uint tokens[]; };   // (N_tokens,)
layout(std430, binding = 1) readonly buffer Offsets { uint offsets[]; }; // (B,)
layout(binding = 2) uniform samplerBuffer dout4;                         // (B, T, C/4) vec4
layout(std430, binding = 3) buffer Dwte { vec4 dwte[]; };                // (V, C/4) from row v0
layout(std430, binding = 4) writeonly buffer Dwpe { vec4 dwpe[]; };      // (T, C/4)
// dwte bound from row v0: its V rows are tokens v0 .. v0+V-1, the other tokens' sums another dispatch's
layout(push_constant) uniform P { uint B, T, C, V, use_pos, accumulate, v0; } p;
void main() {
    uint i = gid();
    uint C4 = p.C / 4;
    if (i < C4) {
        if (p.accumulate == 0u)  // else add to what is there (a tied lm_head's gradient)
            for (uint v = 0; v < p.V; v++) dwte[v * C4 + i] = vec4(0.0);
        for (uint b = 0; b < p.B; b++) {
            uint base = offsets[b];
            for (uint t = 0; t < p.T; t++) {
                uint row = tokens[base + t] - p.v0;  // wraps past V for tokens before v0
                if (row < p.V) dwte[row * C4 + i] += texelFetch(dout4, int((b * p.T + t) * C4 + i));
            }
        }
        return;
    }
    i -= C4;
    if (p.use_pos == 0 || i >= p.T * C4) return;
    vec4 s = vec4(0.0);
    for (uint b = 0; b < p.B; b++) s += texelFetch(dout4, int(b * p.T * C4 + i));
    dwpe[i] = s;
}
