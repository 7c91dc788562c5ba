#version 450
// Backward of attention_forward, dispatched twice (no float atomics, so bit-reproducible):
//  phase 0, one invocation per row (b,h,t):  datt = dout . v^T;  dpre = att * (datt - sum(att * datt))
//  phase 1, one invocation per element of dqkv (B,T,3C):
//     dq[t]  = HS^-0.5 * sum_t2 dpre[t,t2] k[t2]     dk[t2] = HS^-0.5 * sum_t dpre[t,t2] q[t]
//     dv[t2] = sum_t att[t,t2] dout[t]
// Masked entries have att = 0, hence dpre = 0: the loops need no mask.
// With dropout, datt and the weights for dv go through the same Philox mask as the forward.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "philox.glsl"
#include "flags.glsl"
// Inputs are R32F texel buffers (gathers on lavapipe); dpre is written as storage in phase 0 and read
// through its texel view (binding 6) in phase 1.
layout(binding = 0) uniform samplerBuffer dout_t;                    // (B, T, C)
layout(binding = 1) uniform samplerBuffer qkv_t;                     // (B, T, 3*C)
layout(binding = 2) uniform samplerBuffer att_t;                     // (B, NH, T, T)
layout(std430, binding = 3) buffer Dpre { float dpre[]; };           // (B, NH, T, T) scratch
layout(std430, binding = 4) writeonly buffer Dqkv { float dqkv[]; }; // (B, T, 3*C)
layout(std430, binding = 5) readonly buffer Seed { uvec2 key; };
layout(binding = 6) uniform samplerBuffer dpre_t;                    // the same scratch, for phase 1
float dout(uint i) { return texelFetch(dout_t, int(i)).x; }
float qkv(uint i) { return texelFetch(qkv_t, int(i)).x; }
float att(uint i) { return texelFetch(att_t, int(i)).x; }
layout(push_constant) uniform P { uint B, T, NH, HS, phase, site; float prob; uint causal; } p;  // causal: unused here
float keep_scale(uint idx) {
    if (!F_DROPOUT || p.prob <= 0.0) return 1.0;
    return dropout_keep(key, p.site, idx, p.prob) ? 1.0 / (1.0 - p.prob) : 0.0;
}
void main() {
    uint i = gid();
    uint C = p.NH * p.HS, C3 = 3 * C;
    float scale = inversesqrt(float(p.HS));
    if (p.phase == 0) {
        if (i >= p.B * p.NH * p.T) return;
        uint t = i % p.T, bh = i / p.T, h = bh % p.NH, b = bh / p.NH;
        uint row = i * p.T;
        uint o0 = (b * p.T + t) * C + h * p.HS;
        float dot_sum = 0.0;
        for (uint t2 = 0; t2 < p.T; t2++) {
            float a = att(row + t2);
            float da = 0.0;
            if (a != 0.0) {
                uint v0 = (b * p.T + t2) * C3 + 2 * C + h * p.HS;
                for (uint d = 0; d < p.HS; d++) da += dout(o0 + d) * qkv(v0 + d);
                if (F_DROPOUT && p.prob > 0.0) da *= keep_scale(row + t2);
            }
            dpre[row + t2] = da;
            dot_sum += a * da;
        }
        for (uint t2 = 0; t2 < p.T; t2++) dpre[row + t2] = att(row + t2) * (dpre[row + t2] - dot_sum);
        return;
    }
    if (i >= p.B * p.T * C3) return;
    uint c3 = i % C3, bt = i / C3, t = bt % p.T, b = bt / p.T;
    uint which = c3 / C, hd = c3 % C, h = hd / p.HS;
    uint base = (b * p.NH + h) * p.T * p.T;
    float s = 0.0;
    if (which == 0) {          // dq[b,t,h,d]
        for (uint t2 = 0; t2 < p.T; t2++) s += texelFetch(dpre_t, int(base + t * p.T + t2)).x * qkv((b * p.T + t2) * C3 + C + hd);
        s *= scale;
    } else if (which == 1) {   // dk[b,t,h,d], t plays the key position
        for (uint tq = 0; tq < p.T; tq++) s += texelFetch(dpre_t, int(base + tq * p.T + t)).x * qkv((b * p.T + tq) * C3 + hd);
        s *= scale;
    } else {                   // dv[b,t,h,d]
        // two loops, not one with a branch inside: a CPU driver may flatten the branch and run Philox always
        if (F_DROPOUT && p.prob > 0.0) {
            for (uint tq = 0; tq < p.T; tq++)
                s += att(base + tq * p.T + t) * keep_scale(base + tq * p.T + t) * dout((b * p.T + tq) * C + hd);
        } else {
            for (uint tq = 0; tq < p.T; tq++) s += att(base + tq * p.T + t) * dout((b * p.T + tq) * C + hd);
        }
    }
    dqkv[i] = s;
}
