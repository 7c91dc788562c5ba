#version 450
// Vec4 fast path of attention_backward (HS % 4 == 0, HS <= 128): one dispatch, no scratch. With the row constant
//   D[t] = sum_t2 att[t,t2] datt[t,t2] = dout[t] . out[t]
// (FlashAttention's identity; it holds with dropout, as out already carries the mask) the softmax's backward
//   dpre[t,t2] = att[t,t2] (datt[t,t2] - D[t]),   datt[t,t2] = m[t,t2] dout[t] . v[t2]
// needs nothing from the rest of its row, so every gradient is a sum along one row or one column of (T,T):
//   query invocations (b,h,t):  dq[t]  = HS^-0.5 sum_t2 dpre[t,t2] k[t2]
//   key invocations (b,h,t2):   dk[t2] = HS^-0.5 sum_t dpre[t,t2] q[t]     dv[t2] = sum_t att[t,t2] m[t,t2] dout[t]
// m is dropout's keep mask times 1/(1-p), regenerated from the Philox key like the forward. The rows being produced
// stay in registers, the other operands are read as RGBA32F texels (one fetch per 4 multiply-adds), and with the
// causal mask the loops skip the masked half. (The scalar attention_backward.comp keeps two phases and a dpre.)
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "philox.glsl"
layout(binding = 0) uniform samplerBuffer dout4;                     // (B, T, C/4) vec4
layout(binding = 1) uniform samplerBuffer qkv4;                      // (B, T, 3*C/4) vec4: q | k | v
layout(binding = 2) uniform samplerBuffer att_t;                     // (B, NH, T, T), before dropout
layout(binding = 3) uniform samplerBuffer out4;                      // (B, T, C/4) vec4: the forward's output
layout(std430, binding = 4) writeonly buffer Dqkv { vec4 dqkv[]; };  // (B, T, 3*C/4)
layout(std430, binding = 5) readonly buffer Seed { uvec2 key; };
layout(push_constant) uniform P { uint B, T, NH, HS, phase, site; float prob; uint causal; } p;
layout(constant_id = 0) const uint HS4 = 16;  // HS / 4, specialised per model: loops unroll, rows stay in registers
float keep_scale(uint idx) {
    if (p.prob <= 0.0) return 1.0;
    return dropout_keep(key, p.site, idx, p.prob) ? 1.0 / (1.0 - p.prob) : 0.0;
}
float hsum(vec4 v) { return v.x + v.y + v.z + v.w; }
void main() {
    uint i = gid();
    if (i >= 2 * p.B * p.NH * p.T) return;
    // t fastest: neighbouring invocations share (which, b, h) and take the same branch
    uint t = i % p.T, r = i / p.T, h = r % p.NH, r2 = r / p.NH, b = r2 % p.B, which = r2 / p.B;
    uint C4 = p.NH * HS4, C34 = 3 * C4;
    float scale = inversesqrt(float(p.HS));
    uint base = (b * p.NH + h) * p.T * p.T;
    vec4 x[HS4], acc[HS4];
    for (uint j = 0; j < HS4; j++) acc[j] = vec4(0.0);
    if (which == 0) {  // query row t: dq[b,t,h,:]
        uint g0 = (b * p.T + t) * C4 + h * HS4;
        vec4 d4 = vec4(0.0);
        for (uint j = 0; j < HS4; j++) {
            x[j] = texelFetch(dout4, int(g0 + j));  // dout row
            d4 += x[j] * texelFetch(out4, int(g0 + j));
        }
        float D = hsum(d4);
        uint tmax = p.causal != 0 ? t : p.T - 1;
        for (uint t2 = 0; t2 <= tmax; t2++) {
            uint idx = base + t * p.T + t2;
            int k0 = int((b * p.T + t2) * C34 + C4 + h * HS4), v0 = k0 + int(C4);
            vec4 s4 = vec4(0.0);
            for (uint j = 0; j < HS4; j++) s4 += x[j] * texelFetch(qkv4, v0 + int(j));
            float da = hsum(s4);
            if (p.prob > 0.0) da *= keep_scale(idx);
            float w = texelFetch(att_t, int(idx)).x * (da - D);
            for (uint j = 0; j < HS4; j++) acc[j] += w * texelFetch(qkv4, k0 + int(j));
        }
        uint d0 = (b * p.T + t) * C34 + h * HS4;
        for (uint j = 0; j < HS4; j++) dqkv[d0 + j] = acc[j] * scale;
        return;
    }
    // key row t: dk[b,t,h,:] and dv[b,t,h,:]
    uint v0 = (b * p.T + t) * C34 + 2 * C4 + h * HS4;
    for (uint j = 0; j < HS4; j++) x[j] = texelFetch(qkv4, int(v0 + j));  // v row
    vec4 dv[HS4];
    for (uint j = 0; j < HS4; j++) dv[j] = vec4(0.0);
    for (uint tq = p.causal != 0 ? t : 0; tq < p.T; tq++) {
        uint idx = base + tq * p.T + t;
        uint g0 = (b * p.T + tq) * C4 + h * HS4;
        vec4 g[HS4];
        vec4 s4 = vec4(0.0), d4 = vec4(0.0);
        for (uint j = 0; j < HS4; j++) {
            g[j] = texelFetch(dout4, int(g0 + j));
            s4 += g[j] * x[j];
            d4 += g[j] * texelFetch(out4, int(g0 + j));
        }
        float a = texelFetch(att_t, int(idx)).x, am = a;
        if (p.prob > 0.0) am *= keep_scale(idx);
        float w = am * hsum(s4) - a * hsum(d4);
        int q0 = int((b * p.T + tq) * C34 + h * HS4);
        for (uint j = 0; j < HS4; j++) {
            acc[j] += w * texelFetch(qkv4, q0 + int(j));
            dv[j] += am * g[j];
        }
    }
    uint d0 = (b * p.T + t) * C34 + C4 + h * HS4;
    for (uint j = 0; j < HS4; j++) {
        dqkv[d0 + j] = acc[j] * scale;
        dqkv[d0 + C4 + j] = dv[j];
    }
}
