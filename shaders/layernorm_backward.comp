#version 450
// Backward of layernorm_forward, one dispatch with two index ranges:
//   [0, N)      dinp[r,:] (+)= rstd * (dnorm - mean(dnorm) - norm * mean(dnorm * norm)),  dnorm = dout * w
//   [N, N + C)  dw[c] = sum_r dout[r,c] * norm[r,c],  db[c] = sum_r dout[r,c]
// accumulate adds into dinp: the residual stream's gradient flows through unchanged.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "flags.glsl"
layout(std430, binding = 0) readonly buffer Dout { float dout[]; };   // (N, C)
layout(std430, binding = 1) readonly buffer Inp { float inp[]; };     // (N, C)
layout(std430, binding = 2) readonly buffer W { float w[]; };         // (C,)
layout(std430, binding = 3) readonly buffer Stats { vec2 stats[]; };  // (N,)
layout(std430, binding = 4) buffer Dinp { float dinp[]; };            // (N, C)
layout(std430, binding = 5) writeonly buffer Dw { float dw[]; };      // (C,)
layout(std430, binding = 6) writeonly buffer Db { float db[]; };      // (C,)
layout(push_constant) uniform P { uint N, C, accumulate; } p;
void main() {
    uint i = gid();
    if (i < p.N) {
        uint o = i * p.C;
        vec2 s = stats[i];
        float mean_d = 0.0, mean_dn = 0.0;
        for (uint c = 0; c < p.C; c++) {
            float dn = dout[o + c] * w[c];
            mean_d += dn;
            mean_dn += dn * (inp[o + c] - s.x) * s.y;
        }
        mean_d /= float(p.C);
        mean_dn /= float(p.C);
        for (uint c = 0; c < p.C; c++) {
            float norm = (inp[o + c] - s.x) * s.y;
            float g = s.y * (dout[o + c] * w[c] - mean_d - norm * mean_dn);
            if (F_ADD && p.accumulate != 0) dinp[o + c] += g;
            else dinp[o + c] = g;
        }
        return;
    }
    i -= p.N;
    if (i >= p.C) return;
    float sw = 0.0, sb = 0.0;
    for (uint r = 0; r < p.N; r++) {
        vec2 s = stats[r];
        float d = dout[r * p.C + i];
        sw += d * (inp[r * p.C + i] - s.x) * s.y;
        sb += d;
    }
    dw[i] = sw;
    db[i] = sb;
}
