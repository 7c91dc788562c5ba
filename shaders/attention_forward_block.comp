#version 450
// attention_forward4's register path for short blocks on CPU drivers (T % 4 == 0, T <= 8, T * HS/4 <= 64;
// engine/ops/attention.h): one invocation per head of one batch element (b, h) does all T query rows, so the rows of
// k and v are fetched once instead of once per query row (on lavapipe a fetch costs per lane: fetches, not
// multiply-adds, set the time). The same operations in the same order as attention_forward4, so the same bits
// (tests/test_attention.cpp checks it); T and HS/4 are specialisation constants, every loop unrolls.
//   att[b,h,t,:] = softmax(q[b,t,h] . k[b,:,h]^T * HS^-0.5, causal mask)   out[b,t,h] = att @ v
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "index.glsl"
#include "philox.glsl"
#include "flags.glsl"
layout(binding = 0) uniform samplerBuffer qkv4;                     // (B, T, 3*C/4) vec4: q | k | v
layout(std430, binding = 1) buffer Att4 { vec4 att4[]; };          // (B, NH, T, T) as vec4s
layout(std430, binding = 2) writeonly buffer Out { vec4 outp[]; };  // (B, T, C/4)
layout(std430, binding = 3) readonly buffer Seed { uvec2 key; };
layout(push_constant) uniform P { uint B, T, NH, HS, causal, site; float prob; } p;
// bits 0-7: HS / 4; bits 8-15: T (p.T is the same)
layout(constant_id = 0) const uint SPEC = 8u | (8u << 8);
const uint HS4 = SPEC & 255u;
const uint TB = SPEC >> 8u;
const uint T4 = TB / 4u;
void main() {
    uint i = gid();
    if (i >= p.B * p.NH) return;
    uint h = i % p.NH, b = i / p.NH;
    uint C4 = p.NH * HS4, C34 = 3 * C4;
    float scale = inversesqrt(float(p.HS));
    vec4 k[TB][HS4], v[TB][HS4];
    [[unroll]] for (uint t = 0; t < TB; t++) {
        uint r = (b * TB + t) * C34 + h * HS4;
        [[unroll]] for (uint j = 0; j < HS4; j++) {
            k[t][j] = texelFetch(qkv4, int(r + C4 + j));
            v[t][j] = texelFetch(qkv4, int(r + 2 * C4 + j));
        }
    }
    [[unroll]] for (uint t = 0; t < TB; t++) {
        uint tmax = p.causal != 0 ? t : TB - 1;
        uint row4 = (i * TB + t) * T4, last = tmax / 4;
        vec4 q[HS4];
        uint q0 = (b * TB + t) * C34 + h * HS4;
        [[unroll]] for (uint j = 0; j < HS4; j++) q[j] = texelFetch(qkv4, int(q0 + j));
        vec4 s[T4];
        float mx = -1.0 / 0.0;
        [[unroll]] for (uint g = 0; g < T4; g++) {
            if (g > last) continue;
            vec4 sc;
            [[unroll]] for (uint e = 0; e < 4; e++) {  // q . k[4g + e], as attention_forward4's score()
                vec4 s4 = vec4(0.0);
                [[unroll]] for (uint j = 0; j < HS4; j++) s4 += q[j] * k[4 * g + e][j];
                sc[e] = s4.x + s4.y + s4.z + s4.w;
            }
            uint t0 = 4 * g;
            vec4 s4 = sc * scale;
            s[g] = mix(s4, vec4(-1.0 / 0.0), greaterThan(uvec4(t0, t0 + 1, t0 + 2, t0 + 3), uvec4(tmax)));
            mx = max(mx, max(max(s[g].x, s[g].y), max(s[g].z, s[g].w)));
        }
        float sum = 0.0;
        [[unroll]] for (uint g = 0; g < T4; g++) {
            if (g > last) continue;
            s[g] = exp(s[g] - mx);
            sum += s[g].x + s[g].y + s[g].z + s[g].w;
        }
        float inv = 1.0 / sum;
        vec4 o[HS4];
        [[unroll]] for (uint j = 0; j < HS4; j++) o[j] = vec4(0.0);
        [[unroll]] for (uint g = 0; g < T4; g++) {
            if (g > last) {
                att4[row4 + g] = vec4(0.0);
                continue;
            }
            vec4 a4 = s[g] * inv;
            att4[row4 + g] = a4;
            if (F_DROPOUT && p.prob > 0.0) a4 *= vec4(dropout_keep4(key, p.site, row4 + g, p.prob)) * (1.0 / (1.0 - p.prob));
            [[unroll]] for (uint j = 0; j < HS4; j++)
                o[j] += a4.x * v[4 * g][j] + a4.y * v[4 * g + 1][j] + a4.z * v[4 * g + 2][j] + a4.w * v[4 * g + 3][j];
        }
        uint o0 = (b * TB + t) * C4 + h * HS4;
        [[unroll]] for (uint j = 0; j < HS4; j++) outp[o0 + j] = o[j];
    }
}
