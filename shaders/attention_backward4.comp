#version 450
// Vec4 fast path of attention_backward (HS % 4 == 0, HS <= 128): one dispatch, no scratch. With the row constant
//   D[t] = sum_t2 att[t,t2] datt[t,t2] = dout[t] . out[t]
// (FlashAttention's identity; it holds with dropout, as out already carries the mask) the softmax's backward
//   dpre[t,t2] = att[t,t2] (datt[t,t2] - D[t]),   datt[t,t2] = m[t,t2] dout[t] . v[t2]
// needs nothing from the rest of its row, so every gradient is a sum along one row or one column of (T,T):
//   query invocations (b,h, RB rows t):  dq[t]  = HS^-0.5 sum_t2 dpre[t,t2] k[t2]
//   key invocations (b,h, RB rows t2):   dk[t2] = HS^-0.5 sum_t dpre[t,t2] q[t]
//                                        dv[t2] = sum_t att[t,t2] m[t,t2] dout[t]
// m is dropout's keep mask times 1/(1-p), regenerated from the Philox key like the forward. The rows being produced
// stay private to the invocation, the other operands are read as RGBA32F texels (one fetch per 4 * RB multiply-adds),
// and with the causal mask the loops skip the masked half. (The scalar attention_backward.comp keeps two phases and a
// dpre.)
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
layout(binding = 6) uniform samplerBuffer att4;                      // binding 2's buffer as vec4s (ATT4), else unused
layout(push_constant) uniform P { uint B, T, NH, HS, phase, site; float prob; uint causal; } p;
// bits 0-7: HS / 4, specialised per model (loops unroll, rows stay in registers); bits 8-15: RB, the rows of one
// invocation (engine/ops/attention.h: 4 on CPU devices, 1 on GPUs); bit 16: (b, h) fastest (short blocks); bit 17:
// T % 4 == 0, so that dropout's Philox blocks (4 consecutive elements of att each) start on rows' and row blocks' first
// elements: each block is then computed once for the 4 elements it decides (else once an element, 4x the work);
// bit 18 (with bit 17, att bound at a 16-byte offset): att read 4 consecutive keys a fetch (binding 6) where a loop
// takes them in groups of 4, instead of one a fetch
layout(constant_id = 0) const uint SPEC = 16u | (1u << 8);
const uint HS4 = SPEC & 255u;
const uint RB = (SPEC >> 8u) & 255u;
const bool BH_FASTEST = ((SPEC >> 16u) & 1u) != 0u;
// (bit arithmetic, not &&: glslang emits a short-circuit && of specialisation constants as code that spirv-opt rejects)
const uint BLOCKS4_BIT = (SPEC >> 17u) & (KFLAGS >> 3u) & 1u;  // bit 17 and F_DROPOUT
const bool BLOCKS4 = BLOCKS4_BIT != 0u;
const bool KEY_BLOCKS4 = (BLOCKS4_BIT << (RB & 3u)) == 1u;  // and RB % 4 == 0: a key invocation's rows are whole blocks
const uint ATT4_BIT = (SPEC >> 17u) & (SPEC >> 18u) & 1u;
const bool ATT4 = ATT4_BIT != 0u;                         // the query rows' loop in groups of 4 keys, att as vec4s
const bool KEY_ATT4 = (ATT4_BIT << (RB & 3u)) == 1u;      // and RB % 4 == 0: a key invocation's columns as vec4s
uvec2 key2;  // the key, loaded once at the start (a storage-buffer load is a loop over the lanes on lavapipe)
float keep_scale(uint idx) {
    if (!F_DROPOUT || p.prob <= 0.0) return 1.0;
    return dropout_keep(key2, p.site, idx, p.prob) ? 1.0 / (1.0 - p.prob) : 0.0;
}
// keep_scale of elements 4 * index4 .. 4 * index4 + 3 (the same values, one Philox block)
vec4 keep_scale4(uint index4) {
    if (!F_DROPOUT || p.prob <= 0.0) return vec4(1.0);
    bvec4 k = dropout_keep4(key2, p.site, index4, p.prob);
    float s = 1.0 / (1.0 - p.prob);
    return vec4(k.x ? s : 0.0, k.y ? s : 0.0, k.z ? s : 0.0, k.w ? s : 0.0);
}
// component e of v, by selects (a component picked by a variable index is a stack access on CPU drivers)
float comp(vec4 v, uint e) { return e == 0u ? v.x : e == 1u ? v.y : e == 2u ? v.z : v.w; }
float hsum(vec4 v) { return v.x + v.y + v.z + v.w; }
// One invocation: RB consecutive query rows (dq) or key rows (dk, dv) of one (b, h). Each row of k and v (for the
// queries) or of dout, out and q (for the keys) is fetched once for the RB rows instead of once a row: on lavapipe
// a fetch is a call into the driver that costs far more than the 4 multiply-adds it feeds. Every row's sums run in
// the same order as with RB 1.
void main() {
    if (F_DROPOUT) key2 = key;
    uint i = gid();
    uint nb = (p.T + RB - 1) / RB;  // row blocks per (b, h)
    if (i >= 2 * p.B * p.NH * nb) return;
    // Neighbouring invocations share `which` (the same branch) and either (b, h) (the blocks fastest: they read the
    // same rows of k and v, or dout, out and q; long blocks) or the block (short blocks, where the blocks of a causal
    // head differ most in length and lanes of the same block loop alike)
    uint tb, b, h, which;
    if (BH_FASTEST) {
        uint bh = i % (p.B * p.NH), r = i / (p.B * p.NH);
        tb = r % nb, which = r / nb, b = bh / p.NH, h = bh % p.NH;
    } else {
        uint r = i / nb, r2 = r / p.NH;
        tb = i % nb, h = r % p.NH, b = r2 % p.B, which = r2 / p.B;
    }
    uint t0 = tb * RB, tlast = min(t0 + RB, p.T) - 1;
    uint C4 = p.NH * HS4, C34 = 3 * C4;
    float scale = inversesqrt(float(p.HS));
    uint base = (b * p.NH + h) * p.T * p.T;
    vec4 x[RB][HS4], acc[RB][HS4];
    [[unroll]] for (uint rr = 0; rr < RB; rr++)
        [[unroll]] for (uint j = 0; j < HS4; j++) acc[rr][j] = vec4(0.0);
    if (which == 0) {  // query rows t0..tlast: dq[b,t,h,:]
        float D[RB];
        [[unroll]] for (uint rr = 0; rr < RB; rr++) {
            uint g0 = (b * p.T + min(t0 + rr, tlast)) * C4 + h * HS4;
            vec4 d4 = vec4(0.0);
            [[unroll]] for (uint j = 0; j < HS4; j++) {
                x[rr][j] = texelFetch(dout4, int(g0 + j));  // dout row
                d4 += x[rr][j] * texelFetch(out4, int(g0 + j));
            }
            D[rr] = hsum(d4);
        }
        uint tmax = p.causal != 0 ? tlast : p.T - 1;
        // keys t2 in groups of 4 (BLOCKS4: each row's dropout block once a group; ATT4: its 4 weights one fetch) or
        // one at a time
        uint G = 1u;
        if (BLOCKS4 || ATT4) G = 4u;
        for (uint g = 0; g <= tmax / G; g++) {
            vec4 ks[RB], a4[RB];
            [[unroll]] for (uint rr = 0; rr < RB; rr++) {
                if (BLOCKS4) ks[rr] = keep_scale4((base + (t0 + rr) * p.T) / 4u + g);
                if (ATT4) a4[rr] = texelFetch(att4, int((base + min(t0 + rr, tlast) * p.T) / 4u + g));
            }
            for (uint e = 0; e < G; e++) {  // (unrolled: the same speed, 4 copies of the body)
                uint t2 = g * G + e;
                if (t2 > tmax) break;
                int k0 = int((b * p.T + t2) * C34 + C4 + h * HS4), v0 = k0 + int(C4);
                vec4 kk[HS4], vv[HS4];
                [[unroll]] for (uint j = 0; j < HS4; j++) {
                    vv[j] = texelFetch(qkv4, v0 + int(j));
                    kk[j] = texelFetch(qkv4, k0 + int(j));
                }
                [[unroll]] for (uint rr = 0; rr < RB; rr++) {
                    uint t = t0 + rr;
                    if (t > tlast || (t2 > t && p.causal != 0)) continue;
                    uint idx = base + t * p.T + t2;
                    vec4 s4 = vec4(0.0);
                    [[unroll]] for (uint j = 0; j < HS4; j++) s4 += x[rr][j] * vv[j];
                    float da = hsum(s4);
                    if (BLOCKS4 && p.prob > 0.0) da *= comp(ks[rr], e);
                    else if (F_DROPOUT && p.prob > 0.0) da *= keep_scale(idx);
                    float w = (ATT4 ? comp(a4[rr], e) : texelFetch(att_t, int(idx)).x) * (da - D[rr]);
                    [[unroll]] for (uint j = 0; j < HS4; j++) acc[rr][j] += w * kk[j];
                }
            }
        }
        [[unroll]] for (uint rr = 0; rr < RB; rr++) {
            uint t = t0 + rr;
            if (t > tlast) continue;
            uint d0 = (b * p.T + t) * C34 + h * HS4;
            [[unroll]] for (uint j = 0; j < HS4; j++) dqkv[d0 + j] = acc[rr][j] * scale;
        }
        return;
    }
    // key rows t0..tlast: dk[b,t,h,:] and dv[b,t,h,:]
    vec4 dv[RB][HS4];
    [[unroll]] for (uint rr = 0; rr < RB; rr++) {
        uint v0 = (b * p.T + min(t0 + rr, tlast)) * C34 + 2 * C4 + h * HS4;
        [[unroll]] for (uint j = 0; j < HS4; j++) {
            x[rr][j] = texelFetch(qkv4, int(v0 + j));  // v row
            dv[rr][j] = vec4(0.0);
        }
    }
    for (uint tq = p.causal != 0 ? t0 : 0; tq < p.T; tq++) {
        uint g0 = (b * p.T + tq) * C4 + h * HS4;
        int q0 = int((b * p.T + tq) * C34 + h * HS4);
        vec4 g[HS4], q[HS4];
        vec4 d4 = vec4(0.0);
        [[unroll]] for (uint j = 0; j < HS4; j++) {
            g[j] = texelFetch(dout4, int(g0 + j));
            d4 += g[j] * texelFetch(out4, int(g0 + j));
            q[j] = texelFetch(qkv4, q0 + int(j));
        }
        float D = hsum(d4);
        // KEY_BLOCKS4: columns t0 .. t0+RB-1 of row tq are RB/4 whole blocks (RB <= 8)
        vec4 ks0 = vec4(1.0), ks1 = vec4(1.0);
        if (KEY_BLOCKS4) ks0 = keep_scale4((base + tq * p.T + t0) / 4u);
        if (KEY_BLOCKS4 && RB >= 8u) ks1 = keep_scale4((base + tq * p.T + t0) / 4u + 1u);
        // KEY_ATT4: those columns' weights, 4 a fetch (the second only inside the row: T % 8 may be 4)
        vec4 a0 = vec4(0.0), a1 = vec4(0.0);
        if (KEY_ATT4) a0 = texelFetch(att4, int((base + tq * p.T + t0) / 4u));
        if (KEY_ATT4 && RB >= 8u && t0 + 4u < p.T) a1 = texelFetch(att4, int((base + tq * p.T + t0) / 4u + 1u));
        [[unroll]] for (uint rr = 0; rr < RB; rr++) {
            uint t = t0 + rr;
            if (t > tlast || (tq < t && p.causal != 0)) continue;
            uint idx = base + tq * p.T + t;
            vec4 s4 = vec4(0.0);
            [[unroll]] for (uint j = 0; j < HS4; j++) s4 += g[j] * x[rr][j];
            float a = KEY_ATT4 ? comp(rr < 4u ? a0 : a1, rr % 4u) : texelFetch(att_t, int(idx)).x, am = a;
            if (KEY_BLOCKS4 && p.prob > 0.0) am *= comp(rr < 4u ? ks0 : ks1, rr % 4u);
            else if (F_DROPOUT && p.prob > 0.0) am *= keep_scale(idx);
            float w = am * hsum(s4) - a * D;
            [[unroll]] for (uint j = 0; j < HS4; j++) {
                acc[rr][j] += w * q[j];
                dv[rr][j] += am * g[j];
            }
        }
    }
    [[unroll]] for (uint rr = 0; rr < RB; rr++) {
        uint t = t0 + rr;
        if (t > tlast) continue;
        uint d0 = (b * p.T + t) * C34 + C4 + h * HS4;
        [[unroll]] for (uint j = 0; j < HS4; j++) {
            dqkv[d0 + j] = acc[rr][j] * scale;
            dqkv[d0 + C4 + j] = dv[rr][j];
        }
    }
}
