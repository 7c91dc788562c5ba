#version 450
// Attention on GPUs (T % 4 == 0, HS % 4 == 0), the first product of the forward and of the backward, for every
// (b, h) at once: C[t][t2] = sum_j X[b,t,h,j] * Y[b,t2,h,j], one 128x128 tile of the (T, T) matrix per workgroup
// of 256 (shaders/common/gemm_smem.glsl: A = X, B = Y, l = j).
//   mode 0, scores:  X = q, Y = k; att[b,h,t,t2] = C * HS^-0.5 (attention_softmax then normalises the rows)
//   mode 1, datt:    X = dout, Y = v; dpre[b,h,t,t2] = C * dropout's keep/scale (attention_softmax phase 1 next)
// With the causal mask, tiles wholly above the diagonal are skipped and t2 > t is not written: attention_softmax
// writes those zeros. The row-per-invocation kernels (attention_forward4, attention_backward4) serve CPU devices.
#extension GL_GOOGLE_include_directive : require
#include "philox.glsl"
layout(binding = 0) uniform samplerBuffer x4;                         // rows of X: (B, T, x_stride4) vec4
layout(binding = 1) uniform samplerBuffer y4;                         // rows of Y: (B, T, y_stride4) vec4
layout(std430, binding = 2) writeonly buffer Outm { float outm[]; };  // (B, NH, T, T)
layout(std430, binding = 3) readonly buffer Seed { uvec2 key; };
layout(push_constant) uniform P {
    uint B, T, NH, HS, causal, site; float prob; uint mode, x_stride4, x_off4, y_stride4, y_off4; float scale;
} p;
uint b, h, t0, u0;  // this workgroup's (b, h) and tile: rows t0.., columns (key positions) u0..
vec4 load_a(uint r, uint l) {  // X[b, t0 + r, h, l .. l+3]; rows clamped: computed, not stored
    if (l >= p.HS) return vec4(0.0);
    return texelFetch(x4, int((b * p.T + min(t0 + r, p.T - 1)) * p.x_stride4 + p.x_off4 + (h * p.HS + l) / 4));
}
vec4 load_b(uint c, uint l) {  // Y[b, u0 + c, h, l .. l+3]
    if (l >= p.HS) return vec4(0.0);
    return texelFetch(y4, int((b * p.T + min(u0 + c, p.T - 1)) * p.y_stride4 + p.y_off4 + (h * p.HS + l) / 4));
}
void store(uint r, uint c, float v) {
    uint t = t0 + r, t2 = u0 + c;
    if (t >= p.T || t2 >= p.T || (p.causal != 0 && t2 > t)) return;
    uint idx = ((b * p.NH + h) * p.T + t) * p.T + t2;
    if (p.mode == 0) v *= p.scale;
    else if (p.prob > 0.0) v *= dropout_keep(key, p.site, idx, p.prob) ? 1.0 / (1.0 - p.prob) : 0.0;
    outm[idx] = v;
}
#define A_DIRECT 0
#define B_DIRECT 0
#include "gemm_smem.glsl"

void main() {
    uint tiles_t = (p.T + TILE - 1) / TILE, tiles = tiles_t * tiles_t, wg = group_index();
    if (wg >= p.B * p.NH * tiles) return;  // whole workgroups only: no barrier is skipped by some
    uint bh = wg / tiles, i = wg % tiles;
    b = bh / p.NH;
    h = bh % p.NH;
    t0 = (i / tiles_t) * TILE;
    u0 = (i % tiles_t) * TILE;
    if (p.causal != 0 && u0 > t0 + TILE - 1) return;  // wholly in the masked future
    gemm(0, p.HS);
    gemm_store();
}
