#version 450
// Vec4 path of embedding_forward for C % 4 == 0 (same outputs, bit for bit): one invocation per (b, t, 4 channels),
// wte and wpe read as RGBA32F texels (a vector gather on lavapipe instead of a scalar loop per lane).
//   x[b,t,:] = wte[tokens[offsets[b]+t], :] + wpe[t, :]   (wpe only when use_pos)
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "flags.glsl"
layout(std430, binding = 0) readonly buffer Tokens { uint tokens[]; };   // (N_tokens,)
layout(std430, binding = 1) readonly buffer Offsets { uint offsets[]; }; // (B,)
layout(binding = 2) uniform samplerBuffer wte4;                          // (V, C/4) vec4
layout(binding = 3) uniform samplerBuffer wpe4;                          // (T_max, C/4) vec4
layout(std430, binding = 4) writeonly buffer Out { vec4 outp[]; };       // (B, T, C/4)
layout(push_constant) uniform P { uint B, T, C, use_pos; } p;
// T in bits 0-15 and C/4 in bits 16-31 (engine/ops/embedding.h), or 0: p.T and p.C. Constants, the divisions by them
// below become multiplications (lavapipe has no vector integer division: a division a lane, 4 an invocation).
layout(constant_id = 0) const uint SHAPE = 0u;
void main() {
    uint i = gid();
    uint T = SHAPE != 0u ? SHAPE & 0xFFFFu : p.T, C4 = SHAPE != 0u ? SHAPE >> 16u : p.C / 4;
    if (i >= p.B * T * C4) return;
    uint c4 = i % C4, bt = i / C4, t = bt % T, b = bt / T;
    uint tok = tokens[offsets[b] + t];
    vec4 x = texelFetch(wte4, int(tok * C4 + c4));
    if (F_POS && p.use_pos != 0) x += texelFetch(wpe4, int(t * C4 + c4));
    outp[i] = x;
}
