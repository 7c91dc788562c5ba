#version 450
// attention_backward4 for short blocks on CPU drivers (T <= 8, T * HS/4 <= 64; engine/ops/attention.h): one
// invocation per head of one batch element (b, h) does the whole (T,T) block, so each row of q, k, v and out is
// fetched once (dout twice) instead of once per pair of rows (on lavapipe a fetch costs per lane: fetches, not
// multiply-adds, set the time). Two passes keep what is live small (one pass held six whole blocks of rows, 1536
// floats a lane at single-head's HS 32): first the (T,T) weights from dout, out and v, then for each vec4 column j of
// the head the rows' q, k, dout at j and dq, dk, dv at j (faster than one pass at single-head's HS 32, the same at
// layernorm's HS 8: bench/RESULTS.md, "attention block kernels"). Loops over rows are unrolled (T and HS/4
// are specialisation constants), so rows and weights live in registers and on the stack at fixed places. The same
// sums in the same order as attention_backward4 (see there for the maths):
//   dq[t]  = HS^-0.5 sum_t2 att[t,t2] (m[t,t2] dout[t].v[t2] - D[t]) k[t2]        (query rows, t2 ascending)
//   dk[t2] = HS^-0.5 sum_t (att m dout[t].v[t2] - att D[t]) q[t]                   (key rows, t ascending)
//   dv[t2] = sum_t att[t,t2] m[t,t2] dout[t]
// with D[t] = dout[t] . out[t] and m dropout's keep mask times 1/(1-p), regenerated from the Philox key.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "index.glsl"
#include "philox.glsl"
#include "flags.glsl"
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
    if (!F_DROPOUT || p.prob <= 0.0) return 1.0;
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
    // pass 1: per (query t, key t2) the weights of the three sums (masked pairs are skipped in pass 2)
    float wq[TB][TB], wk[TB][TB], am[TB][TB];
    {
        vec4 v[TB][HS4];
        [[unroll]] for (uint t = 0; t < TB; t++)
            [[unroll]] for (uint j = 0; j < HS4; j++)
                v[t][j] = texelFetch(qkv4, int((b * TB + t) * C34 + 2 * C4 + h * HS4 + j));
        [[unroll]] for (uint t = 0; t < TB; t++) {
            uint o = (b * TB + t) * C4 + h * HS4;
            vec4 g[HS4], d4 = vec4(0.0);
            [[unroll]] for (uint j = 0; j < HS4; j++) {
                g[j] = texelFetch(dout4, int(o + j));
                d4 += g[j] * texelFetch(out4, int(o + j));
            }
            float D = hsum(d4);
            [[unroll]] for (uint t2 = 0; t2 < TB; t2++) {
                wq[t][t2] = 0.0, wk[t][t2] = 0.0, am[t][t2] = 0.0;
                if (t2 > t && p.causal != 0) continue;  // no break: the loop keeps a constant trip count and unrolls
                uint idx = base + t * TB + t2;
                vec4 s4 = vec4(0.0);
                [[unroll]] for (uint j = 0; j < HS4; j++) s4 += g[j] * v[t2][j];
                float S = hsum(s4), a = texelFetch(att_t, int(idx)).x, m = keep_scale(idx);
                float da = S;
                if (F_DROPOUT && p.prob > 0.0) da *= m;
                wq[t][t2] = a * (da - D);  // attention_backward4's query path
                float amt = a;
                if (F_DROPOUT && p.prob > 0.0) amt *= m;
                am[t][t2] = amt;
                wk[t][t2] = amt * S - a * D;  // its key path
            }
        }
    }
    // pass 2: one vec4 column j of every row at a time; each sum in attention_backward4's order
    for (uint j = 0; j < HS4; j++) {
        vec4 q[TB], k[TB], g[TB];
        [[unroll]] for (uint t = 0; t < TB; t++) {
            uint r = (b * TB + t) * C34 + h * HS4 + j;
            q[t] = texelFetch(qkv4, int(r));
            k[t] = texelFetch(qkv4, int(r + C4));
            g[t] = texelFetch(dout4, int((b * TB + t) * C4 + h * HS4 + j));
        }
        [[unroll]] for (uint t = 0; t < TB; t++) {  // dq[t] over keys t2 ascending
            vec4 dq = vec4(0.0);
            [[unroll]] for (uint t2 = 0; t2 < TB; t2++) {
                if (t2 > t && p.causal != 0) continue;
                dq += wq[t][t2] * k[t2];
            }
            dqkv[(b * TB + t) * C34 + h * HS4 + j] = dq * scale;
        }
        [[unroll]] for (uint t2 = 0; t2 < TB; t2++) {  // dk[t2], dv[t2] over queries t ascending
            vec4 dk = vec4(0.0), dv = vec4(0.0);
            [[unroll]] for (uint t = 0; t < TB; t++) {
                if (t2 > t && p.causal != 0) continue;
                dk += wk[t][t2] * q[t];
                dv += am[t][t2] * g[t];
            }
            uint d0 = (b * TB + t2) * C34 + C4 + h * HS4 + j;
            dqkv[d0] = dk * scale;
            dqkv[d0 + C4] = dv;
        }
    }
}
