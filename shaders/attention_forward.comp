#version 450
// Masked multi-head self-attention, one invocation per query row (b, h, t):
//   att[b,h,t,:] = softmax(q[b,t,h] . k[b,:,h]^T * HS^-0.5, causal mask)   out[b,t,h] = att @ v
// qkv packs q | k | v along channels, each C = NH*HS wide with head h at h*HS: the lecture's torch.cat.
// Masked (future) weights are stored as exact zeros; causal = 0 gives the encoder (no mask).
// With dropout (prob > 0) the weights used for att @ v are dropped by a Philox mask; `att` keeps the
// undropped softmax, which is what the heatmap shows and what backward needs.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
#include "philox.glsl"
#include "flags.glsl"
layout(binding = 0) uniform samplerBuffer qkv_t;                    // (B, T, 3*C) R32F: gathers on lavapipe
layout(std430, binding = 1) buffer Att { float att[]; };            // (B, NH, T, T)
layout(std430, binding = 2) buffer Out { float outp[]; }; // (B, T, C)
layout(std430, binding = 3) readonly buffer Seed { uvec2 key; };
layout(push_constant) uniform P { uint B, T, NH, HS, causal, site; float prob; } p;
void main() {
    uint i = gid();
    if (i >= p.B * p.NH * p.T) return;
    uint t = i % p.T, bh = i / p.T, h = bh % p.NH, b = bh / p.NH;
    uint C = p.NH * p.HS, C3 = 3 * C;
    float scale = inversesqrt(float(p.HS));
    uint q0 = (b * p.T + t) * C3 + h * p.HS;
    uint row = i * p.T;
    uint tmax = p.causal != 0 ? t : p.T - 1;
    float mx = -1.0 / 0.0;
    for (uint t2 = 0; t2 <= tmax; t2++) {
        uint k0 = (b * p.T + t2) * C3 + C + h * p.HS;
        float s = 0.0;
        for (uint d = 0; d < p.HS; d++) s += texelFetch(qkv_t, int(q0 + d)).x * texelFetch(qkv_t, int(k0 + d)).x;
        s *= scale;
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
    for (uint t2 = 0; t2 <= tmax; t2++) att[row + t2] *= inv;
    for (uint t2 = tmax + 1; t2 < p.T; t2++) att[row + t2] = 0.0;
    uint o0 = (b * p.T + t) * C + h * p.HS;
    for (uint d = 0; d < p.HS; d++) outp[o0 + d] = 0.0;
    float drop_scale = 1.0 / (1.0 - p.prob);
    for (uint t2 = 0; t2 <= tmax; t2++) {
        // the dropout mask is a pure function of the index: backward regenerates it
        if (F_DROPOUT && p.prob > 0.0 && !dropout_keep(key, p.site, row + t2, p.prob)) continue;
        float a = att[row + t2] * drop_scale;
        uint v0 = (b * p.T + t2) * C3 + 2 * C + h * p.HS;
        for (uint d = 0; d < p.HS; d++) outp[o0 + d] += a * texelFetch(qkv_t, int(v0 + d)).x;
    }
}
