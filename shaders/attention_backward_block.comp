#version 450
// attention_backward4 for short blocks on CPU drivers (T <= 8, T * HS/4 <= 64; engine/ops/attention.h): one
// invocation per head of one batch element (b, h) does the whole (T,T) block, so each row of q, k, v, dout and out is
// fetched once instead of once per pair of rows (on lavapipe a fetch costs per lane: fetches, not multiply-adds, set
// the time). Loops over rows are unrolled (T and HS/4 are specialisation constants), so the rows live in registers
// and on the stack at fixed places. The same sums in the same order as attention_backward4 (see there for the maths):
//   dq[t]  = HS^-0.5 sum_t2 att[t,t2] (m[t,t2] dout[t].v[t2] - D[t]) k[t2]        (query rows, t2 ascending)
//   dk[t2] = HS^-0.5 sum_t (att m dout[t].v[t2] - att D[t]) q[t]                   (key rows, t ascending)
//   dv[t2] = sum_t att[t,t2] m[t,t2] dout[t]
// with D[t] = dout[t] . out[t] and m dropout's keep mask times 1/(1-p), regenerated from the Philox key.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "index.glsl"
#include "philox.glsl"
layout(binding = 0) uniform samplerBuffer dout4;                     // (B, T, C/4) vec4
layout(binding = 1) uniform samplerBuffer qkv4;                      // (B, T, 3*C/4) vec4: q | k | v
layout(binding = 2) uniform samplerBuffer att_t;                     // (B, NH, T, T), before dropout
layout(binding = 3) uniform samplerBuffer out4;                      // (B, T, C/4) vec4: the forward's output
layout(std430, binding = 4) writeonly buffer Dqkv { vec4 dqkv[]; };  // (B, T, 3*C/4)
layout(std430, binding = 5) readonly buffer Seed { uvec2 key; };
layout(push_constant) uniform P { uint B, T, NH, HS, phase, site; float prob; uint causal; } p;
// bits 0-7: HS / 4; bits 8-15: T (p.T is the same)
layout(constant_id = 0) const uint SPEC = 8u | (8u << 8);
const uint HS4 = SPEC & 255u;
const uint TB = SPEC >> 8u;
float keep_scale(uint idx) {
    if (p.prob <= 0.0) return 1.0;
    return dropout_keep(key, p.site, idx, p.prob) ? 1.0 / (1.0 - p.prob) : 0.0;
}
float hsum(vec4 v) { return v.x + v.y + v.z + v.w; }
void main() {
    uint i = gid();
    if (i >= p.B * p.NH) return;
    uint h = i % p.NH, b = i / p.NH;
    uint C4 = p.NH * HS4, C34 = 3 * C4;
    float scale = inversesqrt(float(p.HS));
    uint base = i * TB * TB;  // att[b, h]
    vec4 q[TB][HS4], k[TB][HS4], v[TB][HS4], g[TB][HS4], dk[TB][HS4], dv[TB][HS4];
    float D[TB];
    [[unroll]] for (uint t = 0; t < TB; t++) {
        uint r = (b * TB + t) * C34 + h * HS4, o = (b * TB + t) * C4 + h * HS4;
        vec4 d4 = vec4(0.0);
        [[unroll]] for (uint j = 0; j < HS4; j++) {
            q[t][j] = texelFetch(qkv4, int(r + j));
            k[t][j] = texelFetch(qkv4, int(r + C4 + j));
            v[t][j] = texelFetch(qkv4, int(r + 2 * C4 + j));
            g[t][j] = texelFetch(dout4, int(o + j));
            d4 += g[t][j] * texelFetch(out4, int(o + j));
            dk[t][j] = vec4(0.0);
            dv[t][j] = vec4(0.0);
        }
        D[t] = hsum(d4);
    }
    [[unroll]] for (uint t = 0; t < TB; t++) {  // query rows in order; each key row gets its terms in t order too
        vec4 dq[HS4];
        [[unroll]] for (uint j = 0; j < HS4; j++) dq[j] = vec4(0.0);
        [[unroll]] for (uint t2 = 0; t2 < TB; t2++) {
            if (t2 > t && p.causal != 0) continue;  // no break: the loop keeps a constant trip count and unrolls
            uint idx = base + t * TB + t2;
            vec4 s4 = vec4(0.0);
            [[unroll]] for (uint j = 0; j < HS4; j++) s4 += g[t][j] * v[t2][j];
            float S = hsum(s4), a = texelFetch(att_t, int(idx)).x, m = keep_scale(idx);
            float da = S;
            if (p.prob > 0.0) da *= m;
            float wq = a * (da - D[t]);  // attention_backward4's query path
            float am = a;
            if (p.prob > 0.0) am *= m;
            float wk = am * S - a * D[t];  // its key path
            [[unroll]] for (uint j = 0; j < HS4; j++) {
                dq[j] += wq * k[t2][j];
                dk[t2][j] += wk * q[t][j];
                dv[t2][j] += am * g[t][j];
            }
        }
        uint d0 = (b * TB + t) * C34 + h * HS4;
        [[unroll]] for (uint j = 0; j < HS4; j++) dqkv[d0 + j] = dq[j] * scale;
    }
    [[unroll]] for (uint t = 0; t < TB; t++) {
        uint d0 = (b * TB + t) * C34 + C4 + h * HS4;
        [[unroll]] for (uint j = 0; j < HS4; j++) {
            dqkv[d0 + j] = dk[t][j] * scale;
            dqkv[d0 + C4 + j] = dv[t][j];
        }
    }
}
