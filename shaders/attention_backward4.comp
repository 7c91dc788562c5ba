#version 450
// Vec4 fast path of attention_backward (HS % 4 == 0, HS <= 128), dispatched twice like the scalar one:
//  phase 0, one invocation per row (b,h,t):  datt = dout . v^T;  dpre = att * (datt - sum(att * datt))
//  phase 1, one invocation per (which, b, h, t) computing a whole head row of dq, dk or dv:
//     dq[t]  = HS^-0.5 * sum_t2 dpre[t,t2] k[t2]     dk[t2] = HS^-0.5 * sum_t dpre[t,t2] q[t]
//     dv[t2] = sum_t att[t,t2] dout[t]
// The row being produced stays in registers and the other operand is read as RGBA32F texels: one fetch
// per 4 multiply-adds. With the causal mask the loops skip the masked half (its dpre and att are 0).
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "philox.glsl"
layout(binding = 0) uniform samplerBuffer dout4;                     // (B, T, C/4) vec4
layout(binding = 1) uniform samplerBuffer qkv4;                      // (B, T, 3*C/4) vec4
layout(binding = 2) uniform samplerBuffer att_t;                     // (B, NH, T, T)
layout(std430, binding = 3) buffer Dpre { float dpre[]; };           // (B, NH, T, T) scratch
layout(std430, binding = 4) writeonly buffer Dqkv { vec4 dqkv[]; };  // (B, T, 3*C/4)
layout(std430, binding = 5) readonly buffer Seed { uvec2 key; };
layout(binding = 6) uniform samplerBuffer dpre_t;                    // the same scratch, for phase 1
layout(push_constant) uniform P { uint B, T, NH, HS, phase, site; float prob; uint causal; } p;
layout(constant_id = 0) const uint HS4 = 16;  // HS / 4, specialised per model: loops unroll, rows stay in registers
float keep_scale(uint idx) {
    if (p.prob <= 0.0) return 1.0;
    return dropout_keep(key, p.site, idx, p.prob) ? 1.0 / (1.0 - p.prob) : 0.0;
}
void main() {
    uint i = gid();
    uint C4 = p.NH * HS4, C34 = 3 * C4;
    float scale = inversesqrt(float(p.HS));
    vec4 acc[HS4];
    if (p.phase == 0) {
        if (i >= p.B * p.NH * p.T) return;
        uint t = i % p.T, bh = i / p.T, h = bh % p.NH, b = bh / p.NH;
        uint row = i * p.T;
        uint tmax = p.causal != 0 ? t : p.T - 1;
        uint o0 = (b * p.T + t) * C4 + h * HS4;
        for (uint j = 0; j < HS4; j++) acc[j] = texelFetch(dout4, int(o0 + j));  // dout row
        float dot_sum = 0.0;
        for (uint t2 = 0; t2 <= tmax; t2++) {
            int v0 = int((b * p.T + t2) * C34 + 2 * C4 + h * HS4);
            vec4 d4 = vec4(0.0);
            for (uint j = 0; j < HS4; j++) d4 += acc[j] * texelFetch(qkv4, v0 + int(j));
            float da = d4.x + d4.y + d4.z + d4.w;
            if (p.prob > 0.0) da *= keep_scale(row + t2);
            dpre[row + t2] = da;
            dot_sum += texelFetch(att_t, int(row + t2)).x * da;
        }
        for (uint t2 = 0; t2 <= tmax; t2++) dpre[row + t2] = texelFetch(att_t, int(row + t2)).x * (dpre[row + t2] - dot_sum);
        for (uint t2 = tmax + 1; t2 < p.T; t2++) dpre[row + t2] = 0.0;
        return;
    }
    if (i >= 3 * p.B * p.NH * p.T) return;
    // t fastest: neighbouring invocations share (which, b, h) and take the same branch
    uint t = i % p.T, r = i / p.T, h = r % p.NH, r2 = r / p.NH, b = r2 % p.B, which = r2 / p.B;
    uint base = (b * p.NH + h) * p.T * p.T;
    for (uint j = 0; j < HS4; j++) acc[j] = vec4(0.0);
    if (which == 0) {          // dq[b,t,h,:]
        uint tmax = p.causal != 0 ? t : p.T - 1;
        for (uint t2 = 0; t2 <= tmax; t2++) {
            float w = texelFetch(dpre_t, int(base + t * p.T + t2)).x;
            int k0 = int((b * p.T + t2) * C34 + C4 + h * HS4);
            for (uint j = 0; j < HS4; j++) acc[j] += w * texelFetch(qkv4, k0 + int(j));
        }
        for (uint j = 0; j < HS4; j++) acc[j] *= scale;
    } else if (which == 1) {   // dk[b,t,h,:], t plays the key position
        for (uint tq = p.causal != 0 ? t : 0; tq < p.T; tq++) {
            float w = texelFetch(dpre_t, int(base + tq * p.T + t)).x;
            int q0 = int((b * p.T + tq) * C34 + h * HS4);
            for (uint j = 0; j < HS4; j++) acc[j] += w * texelFetch(qkv4, q0 + int(j));
        }
        for (uint j = 0; j < HS4; j++) acc[j] *= scale;
    } else {                   // dv[b,t,h,:]
        for (uint tq = p.causal != 0 ? t : 0; tq < p.T; tq++) {
            uint idx = base + tq * p.T + t;
            float w = texelFetch(att_t, int(idx)).x;
            if (p.prob > 0.0) w *= keep_scale(idx);
            int g0 = int((b * p.T + tq) * C4 + h * HS4);
            for (uint j = 0; j < HS4; j++) acc[j] += w * texelFetch(dout4, g0 + int(j));
        }
    }
    uint d0 = (b * p.T + t) * C34 + which * C4 + h * HS4;
    for (uint j = 0; j < HS4; j++) dqkv[d0 + j] = acc[j];
}
