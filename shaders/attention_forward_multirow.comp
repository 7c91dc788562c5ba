#version 450
// attention_forward4 with 4 query rows an invocation, for CPU devices (T % 4 == 0; engine/ops/attention.h decides):
// each row of k and v is fetched once for the 4 rows instead of once a row (on lavapipe a texel fetch, not the
// multiply-adds it feeds, sets the time), and the rows of scores stay in registers (spilled to the stack, still
// cheaper than storage-buffer loads there). The same operations in the same order as attention_forward4 for every row, so the
// same bits (tests/test_attention.cpp).
//   att[b,h,t,:] = softmax(q[b,t,h] . k[b,:,h]^T * HS^-0.5, causal mask)   out[b,t,h] = dropout(att) @ v
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "philox.glsl"
#include "flags.glsl"
layout(binding = 0) uniform samplerBuffer qkv4;                     // (B, T, 3*C/4) vec4: q | k | v
layout(std430, binding = 1) writeonly buffer Att4 { vec4 att4[]; };  // (B, NH, T, T/4)
layout(std430, binding = 2) writeonly buffer Out { vec4 outp[]; };  // (B, T, C/4)
layout(std430, binding = 3) readonly buffer Seed { uvec2 key; };
layout(push_constant) uniform P { uint B, T, NH, HS, causal, site; float prob; } p;
// specialised per model (engine/ops/attention.h): HS / 4 in bits 0-7, T / 4 in bits 8-15 (loops unroll)
layout(constant_id = 0) const uint SPEC = 4u | (8u << 8);
const uint HS4 = SPEC & 255u;
const uint T4 = (SPEC >> 8u) & 255u;
const uint RB = 4u;  // rows an invocation: t0 .. t0+3, one group of 4 keys' worth, so under the causal mask all four
                     // see keys up to the same group (their last keys masked within it, as attention_forward4 does)
float dot4(vec4 q[HS4], vec4 k[HS4]) {  // as attention_forward4's score(): the same sums in the same order
    vec4 s4 = vec4(0.0);
    for (uint j = 0; j < HS4; j++) s4 += q[j] * k[j];
    return s4.x + s4.y + s4.z + s4.w;
}
void main() {
    uvec2 key2 = F_DROPOUT ? key : uvec2(0u);  // loaded once (a storage-buffer load is a loop over the lanes on lavapipe)
    uint i = gid();
    if (i >= p.B * p.NH * T4) return;
    // (b, h) fastest: the lanes of a subgroup share their row block, so causal loops run alike
    uint bh = i % (p.B * p.NH), tb = i / (p.B * p.NH), h = bh % p.NH, b = bh / p.NH;
    uint t0 = tb * RB;
    uint C4 = p.NH * HS4, C34 = 3 * C4;
    float scale = inversesqrt(float(p.HS));
    uint last = p.causal != 0 ? tb : T4 - 1;  // the last group of 4 keys the block's rows see
    vec4 q[RB][HS4];
    float mx[RB];
    for (uint rr = 0; rr < RB; rr++) {
        uint q0 = (b * p.T + t0 + rr) * C34 + h * HS4;
        for (uint j = 0; j < HS4; j++) q[rr][j] = texelFetch(qkv4, int(q0 + j));
        mx[rr] = -1.0 / 0.0;
    }
    vec4 s[RB][T4];
    for (uint g = 0; g < T4; g++) {
        if (g > last) continue;
        vec4 k0[HS4], k1[HS4], k2[HS4], k3[HS4];
        int kb = int((b * p.T + 4 * g) * C34 + C4 + h * HS4), ks = int(C34);
        for (uint j = 0; j < HS4; j++) {
            k0[j] = texelFetch(qkv4, kb + int(j));
            k1[j] = texelFetch(qkv4, kb + ks + int(j));
            k2[j] = texelFetch(qkv4, kb + 2 * ks + int(j));
            k3[j] = texelFetch(qkv4, kb + 3 * ks + int(j));
        }
        for (uint rr = 0; rr < RB; rr++) {
            uint tmax = p.causal != 0 ? t0 + rr : p.T - 1;
            vec4 s4 = vec4(dot4(q[rr], k0), dot4(q[rr], k1), dot4(q[rr], k2), dot4(q[rr], k3)) * scale;
            uint t2 = 4 * g;
            s4 = mix(s4, vec4(-1.0 / 0.0), greaterThan(uvec4(t2, t2 + 1, t2 + 2, t2 + 3), uvec4(tmax)));
            s[rr][g] = s4;
            mx[rr] = max(mx[rr], max(max(s4.x, s4.y), max(s4.z, s4.w)));
        }
    }
    float inv[RB];
    for (uint rr = 0; rr < RB; rr++) {
        float sum = 0.0;
        for (uint g = 0; g < T4; g++) {
            if (g > last) continue;
            s[rr][g] = exp(s[rr][g] - mx[rr]);
            sum += s[rr][g].x + s[rr][g].y + s[rr][g].z + s[rr][g].w;
        }
        inv[rr] = 1.0 / sum;
    }
    vec4 o[RB][HS4];
    for (uint rr = 0; rr < RB; rr++)
        for (uint j = 0; j < HS4; j++) o[rr][j] = vec4(0.0);
    uint row4 = ((b * p.NH + h) * p.T + t0) * T4;  // row t0's first vec4 of att; row t0+rr's at row4 + rr * T4
    for (uint g = 0; g < T4; g++) {
        if (g > last) {
            for (uint rr = 0; rr < RB; rr++) att4[row4 + rr * T4 + g] = vec4(0.0);
            continue;
        }
        vec4 v0[HS4], v1[HS4], v2[HS4], v3[HS4];
        int vb = int((b * p.T + 4 * g) * C34 + 2 * C4 + h * HS4), vs = int(C34);
        for (uint j = 0; j < HS4; j++) {
            v0[j] = texelFetch(qkv4, vb + int(j));
            v1[j] = texelFetch(qkv4, vb + vs + int(j));
            v2[j] = texelFetch(qkv4, vb + 2 * vs + int(j));
            v3[j] = texelFetch(qkv4, vb + 3 * vs + int(j));
        }
        for (uint rr = 0; rr < RB; rr++) {
            uint r4 = row4 + rr * T4 + g;
            vec4 a4 = s[rr][g] * inv[rr];
            att4[r4] = a4;
            // the dropout mask is a pure function of the index: backward regenerates it
            if (F_DROPOUT && p.prob > 0.0) a4 *= vec4(dropout_keep4(key2, p.site, r4, p.prob)) * (1.0 / (1.0 - p.prob));
            for (uint j = 0; j < HS4; j++)
                o[rr][j] += a4.x * v0[j] + a4.y * v1[j] + a4.z * v2[j] + a4.w * v3[j];
        }
    }
    for (uint rr = 0; rr < RB; rr++) {
        uint o0 = (b * p.T + t0 + rr) * C4 + h * HS4;
        for (uint j = 0; j < HS4; j++) outp[o0 + j] = o[rr][j];
    }
}
