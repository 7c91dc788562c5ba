#version 450
// layernorm_forward for C % 4 == 0 (same maths): rows read as RGBA32F texels (vector gathers on lavapipe instead
// of per-lane scalar storage loads), written as vec4. One invocation per row.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(binding = 0) uniform samplerBuffer inp4;                       // (N, C/4)
layout(binding = 1) uniform samplerBuffer w4;                         // (C/4,)
layout(binding = 2) uniform samplerBuffer b4;                         // (C/4,)
layout(std430, binding = 3) writeonly buffer Out { vec4 outp[]; };    // (N, C/4)
layout(std430, binding = 4) writeonly buffer Stats { vec2 stats[]; }; // (N,) mean, rstd
layout(push_constant) uniform P { uint N, C; } p;
// C / 4 where the row is kept in registers (engine/ops/layernorm.h: C <= 256), else 1: each element is then fetched
// once instead of three times, the same operations in the same order (the same bits)
layout(constant_id = 0) const uint C4R = 1;
void main() {
    uint r = gid();
    if (r >= p.N) return;
    uint C4 = p.C / 4;
    int o = int(r * C4);
    if (C4R > 1u) {
        vec4 x[C4R];
        vec4 m4 = vec4(0.0);
        for (uint c = 0; c < C4R; c++) {
            x[c] = texelFetch(inp4, o + int(c));
            m4 += x[c];
        }
        float m = (m4.x + m4.y + m4.z + m4.w) / float(p.C);
        vec4 v4 = vec4(0.0);
        for (uint c = 0; c < C4R; c++) {
            vec4 d = x[c] - m;
            v4 += d * d;
        }
        float rstd = inversesqrt((v4.x + v4.y + v4.z + v4.w) / float(p.C) + 1e-5);
        for (uint c = 0; c < C4R; c++) outp[o + int(c)] = (x[c] - m) * rstd * texelFetch(w4, int(c)) + texelFetch(b4, int(c));
        stats[r] = vec2(m, rstd);
        return;
    }
    vec4 m4 = vec4(0.0);
    for (uint c = 0; c < C4; c++) m4 += texelFetch(inp4, o + int(c));
    float m = (m4.x + m4.y + m4.z + m4.w) / float(p.C);
    vec4 v4 = vec4(0.0);
    for (uint c = 0; c < C4; c++) {
        vec4 d = texelFetch(inp4, o + int(c)) - m;
        v4 += d * d;
    }
    float rstd = inversesqrt((v4.x + v4.y + v4.z + v4.w) / float(p.C) + 1e-5);
    for (uint c = 0; c < C4; c++)
        outp[o + int(c)] = (texelFetch(inp4, o + int(c)) - m) * rstd * texelFetch(w4, int(c)) + texelFetch(b4, int(c));
    stats[r] = vec2(m, rstd);
}
