#version 450
// Vec4 fast path of attention_forward for head sizes with HS % 4 == 0 and HS <= 128 (same maths, same
// outputs up to float rounding). One invocation per query row (b, h, t): q and the output row stay in
// registers, k and v rows are read as RGBA32F texels, so each fetch feeds 4 multiply-adds instead of 0.5.
//   att[b,h,t,:] = softmax(q[b,t,h] . k[b,:,h]^T * HS^-0.5, causal mask)   out[b,t,h] = att @ v
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "philox.glsl"
#include "flags.glsl"
layout(binding = 0) uniform samplerBuffer qkv4;                     // (B, T, 3*C/4) vec4: q | k | v
layout(std430, binding = 1) buffer Att { float att[]; };            // (B, NH, T, T)
layout(std430, binding = 1) buffer Att4 { vec4 att4[]; };          // the same, as vec4s (T % 4 == 0)
layout(std430, binding = 2) writeonly buffer Out { vec4 outp[]; };  // (B, T, C/4)
layout(std430, binding = 3) readonly buffer Seed { uvec2 key; };
layout(push_constant) uniform P { uint B, T, NH, HS, causal, site; float prob; } p;
// specialised per model: HS / 4 in bits 0-7 (loops unroll, q and the output row stay in registers), and in bits 8-15
// T / 4 when T % 4 == 0 and T <= 16 (the row of scores stays in registers too; engine/ops/attention.h), else 0
layout(constant_id = 0) const uint SPEC = 16;
const uint HS4 = SPEC & 255u;
const uint T4R = SPEC >> 8u;
const uint T4N = T4R > 0u ? T4R : 1u;  // the register row's length (unused when T4R == 0)
// q[t] . k[t2] for the head row q (unscaled)
float score(uint b, uint h, uint t2, uint C4, uint C34, vec4 q[HS4]) {
    int k0 = int((b * p.T + t2) * C34 + C4 + h * HS4);
    vec4 s4 = vec4(0.0);
    for (uint j = 0; j < HS4; j++) s4 += q[j] * texelFetch(qkv4, k0 + int(j));
    return s4.x + s4.y + s4.z + s4.w;
}
void main() {
    uint i = gid();
    if (i >= p.B * p.NH * p.T) return;
    uint t = i % p.T, bh = i / p.T, h = bh % p.NH, b = bh / p.NH;
    uint C4 = p.NH * HS4, C34 = 3 * C4;
    float scale = inversesqrt(float(p.HS));
    uint row = i * p.T;
    uint tmax = p.causal != 0 ? t : p.T - 1;
    vec4 q[HS4];
    uint q0 = (b * p.T + t) * C34 + h * HS4;
    for (uint j = 0; j < HS4; j++) q[j] = texelFetch(qkv4, int(q0 + j));
    uint o0 = (b * p.T + t) * C4 + h * HS4;
    if (T4R > 0u) {
        // the path below with the row in registers: each group of 4 scores stored once, never read back; the same
        // operations in the same order, so the same bits (tests/test_attention.cpp checks it). Written out separately on
        // purpose: one loop for both with the spec constant choosing registers or memory measured ~20% slower on
        // lavapipe (single-head: 0.075 against 0.062 ms a step)
        uint row4 = row / 4, last = tmax / 4;
        vec4 s[T4N];
        float mx = -1.0 / 0.0;
        for (uint g = 0; g < T4N; g++) {  // unrolled: s is indexed by constants
            if (g > last) continue;
            uint t0 = 4 * g;
            vec4 s4 = vec4(score(b, h, t0, C4, C34, q), score(b, h, t0 + 1, C4, C34, q),
                           score(b, h, t0 + 2, C4, C34, q), score(b, h, t0 + 3, C4, C34, q)) * scale;
            s[g] = mix(s4, vec4(-1.0 / 0.0), greaterThan(uvec4(t0, t0 + 1, t0 + 2, t0 + 3), uvec4(tmax)));
            mx = max(mx, max(max(s[g].x, s[g].y), max(s[g].z, s[g].w)));
        }
        float sum = 0.0;
        for (uint g = 0; g < T4N; g++) {
            if (g > last) continue;
            s[g] = exp(s[g] - mx);
            sum += s[g].x + s[g].y + s[g].z + s[g].w;
        }
        float inv = 1.0 / sum;
        vec4 o[HS4];
        for (uint j = 0; j < HS4; j++) o[j] = vec4(0.0);
        for (uint g = 0; g < T4N; g++) {
            if (g > last) {
                att4[row4 + g] = vec4(0.0);
                continue;
            }
            vec4 a4 = s[g] * inv;
            att4[row4 + g] = a4;
            if (F_DROPOUT && p.prob > 0.0) a4 *= vec4(dropout_keep4(key, p.site, row4 + g, p.prob)) * (1.0 / (1.0 - p.prob));
            int v0 = int((b * p.T + 4 * g) * C34 + 2 * C4 + h * HS4), vs = int(C34);
            for (uint j = 0; j < HS4; j++)
                o[j] += a4.x * texelFetch(qkv4, v0 + int(j)) + a4.y * texelFetch(qkv4, v0 + vs + int(j)) +
                        a4.z * texelFetch(qkv4, v0 + 2 * vs + int(j)) + a4.w * texelFetch(qkv4, v0 + 3 * vs + int(j));
        }
        for (uint j = 0; j < HS4; j++) outp[o0 + j] = o[j];
        return;
    }
    if (p.T % 4 == 0) {
        // rows start on a vec4: keys in groups of 4, vec4 loads and stores of the row, one Philox block per
        // group; keys past tmax in the last group score -inf, so their weights come out 0
        uint row4 = row / 4, last = tmax / 4;
        float mx = -1.0 / 0.0;
        for (uint g = 0; g <= last; g++) {
            uint t0 = 4 * g;
            vec4 s4 = vec4(score(b, h, t0, C4, C34, q), score(b, h, t0 + 1, C4, C34, q),
                           score(b, h, t0 + 2, C4, C34, q), score(b, h, t0 + 3, C4, C34, q)) * scale;
            s4 = mix(s4, vec4(-1.0 / 0.0), greaterThan(uvec4(t0, t0 + 1, t0 + 2, t0 + 3), uvec4(tmax)));
            att4[row4 + g] = s4;
            mx = max(mx, max(max(s4.x, s4.y), max(s4.z, s4.w)));
        }
        float sum = 0.0;
        for (uint g = 0; g <= last; g++) {
            vec4 e4 = exp(att4[row4 + g] - mx);
            att4[row4 + g] = e4;
            sum += e4.x + e4.y + e4.z + e4.w;
        }
        float inv = 1.0 / sum;
        for (uint g = last + 1; g < p.T / 4; g++) att4[row4 + g] = vec4(0.0);
        vec4 o[HS4];
        for (uint j = 0; j < HS4; j++) o[j] = vec4(0.0);
        for (uint g = 0; g <= last; g++) {
            vec4 a4 = att4[row4 + g] * inv;
            att4[row4 + g] = a4;
            // the dropout mask is a pure function of the index: backward regenerates it
            if (F_DROPOUT && p.prob > 0.0) a4 *= vec4(dropout_keep4(key, p.site, row4 + g, p.prob)) * (1.0 / (1.0 - p.prob));
            int v0 = int((b * p.T + 4 * g) * C34 + 2 * C4 + h * HS4), vs = int(C34);
            for (uint j = 0; j < HS4; j++)
                o[j] += a4.x * texelFetch(qkv4, v0 + int(j)) + a4.y * texelFetch(qkv4, v0 + vs + int(j)) +
                        a4.z * texelFetch(qkv4, v0 + 2 * vs + int(j)) + a4.w * texelFetch(qkv4, v0 + 3 * vs + int(j));
        }
        for (uint j = 0; j < HS4; j++) outp[o0 + j] = o[j];
        return;
    }
    float mx = -1.0 / 0.0;
    for (uint t2 = 0; t2 <= tmax; t2++) {
        int k0 = int((b * p.T + t2) * C34 + C4 + h * HS4);
        vec4 s4 = vec4(0.0);
        for (uint j = 0; j < HS4; j++) s4 += q[j] * texelFetch(qkv4, k0 + int(j));
        float s = (s4.x + s4.y + s4.z + s4.w) * scale;
        att[row + t2] = s;
        mx = max(mx, s);
    }
    float sum = 0.0;
    for (uint t2 = 0; t2 <= tmax; t2++) {
        float e = exp(att[row + t2] - mx);
        att[row + t2] = e;
        sum += e;
    }
    float inv = 1.0 / sum;
    for (uint t2 = tmax + 1; t2 < p.T; t2++) att[row + t2] = 0.0;
    vec4 o[HS4];
    for (uint j = 0; j < HS4; j++) o[j] = vec4(0.0);
    float drop_scale = 1.0 / (1.0 - p.prob);
    for (uint t2 = 0; t2 <= tmax; t2++) {
        float a = att[row + t2] * inv;
        att[row + t2] = a;
        // the dropout mask is a pure function of the index: backward regenerates it
        if (F_DROPOUT && p.prob > 0.0 && !dropout_keep(key, p.site, row + t2, p.prob)) continue;
        a *= drop_scale;
        int v0 = int((b * p.T + t2) * C34 + 2 * C4 + h * HS4);
        for (uint j = 0; j < HS4; j++) o[j] += a * texelFetch(qkv4, v0 + int(j));
    }
    for (uint j = 0; j < HS4; j++) outp[o0 + j] = o[j];
}
