// Body of attention_pv_smem.comp and attention_ptv_smem.comp (GPUs; T % 4 == 0, HS % 4 == 0): the products of
// a (T, T) matrix P of every (b, h) (att or dpre) with the head's rows of Y, one 128-row tile per workgroup of 256
// (shaders/common/gemm_smem.glsl; head sizes up to 128 are one column tile):
//   PV  (A_DIRECT 0):  C[t][j]  = scale * sum_t2 P'[t][t2] * Y[b,t2,h,j]     out (forward), dq
//   PTV (A_DIRECT 1):  C[t2][j] = scale * sum_t  P'[t][t2] * Y[b,t,h,j]      dk, dv
// P' = P, or P with dropout's keep/scale applied (the att the forward multiplied v by). C goes to
// out[b, row, out_off + h*HS + j] (rows of out_stride floats). With the causal mask P is 0 above the diagonal,
// so the sums stop (PV) or start (PTV) at the tile's diagonal.
#include "philox.glsl"
layout(binding = 0) uniform samplerBuffer p4;                         // (B, NH, T, T/4) vec4
layout(binding = 1) uniform samplerBuffer y4;                         // rows of Y: (B, T, y_stride4) vec4
layout(std430, binding = 2) writeonly buffer Out { float outp[]; };   // rows of out_stride floats
layout(std430, binding = 3) readonly buffer Seed { uvec2 key; };
layout(push_constant) uniform P {
    uint B, T, NH, HS, causal, site; float prob; uint dropout, y_stride4, y_off4, out_stride, out_off; float scale;
} p;
uint b, h, r0, c0;  // this workgroup's (b, h) and tile: rows r0.. (t for PV, t2 for PTV), head columns c0..
vec4 load_p(uint row, uint col) {  // P'[row][col .. col+3] (col a multiple of 4; inside the matrix)
    uint idx = ((b * p.NH + h) * p.T + row) * p.T + col;
    vec4 v = texelFetch(p4, int(idx / 4));
    if (p.dropout != 0 && p.prob > 0.0)  // idx is a multiple of 4 (T % 4 == 0): one Philox block
        v *= vec4(dropout_keep4(key, p.site, idx / 4, p.prob)) / (1.0 - p.prob);
    return v;
}
#if A_DIRECT
vec4 load_a(uint r, uint l) {  // P'[l][r0 + r .. +3]: four key positions of query row l
    return l < p.T && r0 + r < p.T ? load_p(l, r0 + r) : vec4(0.0);
}
#else
vec4 load_a(uint r, uint l) {  // P'[r0 + r][l .. l+3]; rows clamped: computed, not stored
    return l < p.T ? load_p(min(r0 + r, p.T - 1), l) : vec4(0.0);
}
#endif
vec4 load_b(uint c, uint l) {  // Y[b, l, h, c0 + c .. +3]
    if (l >= p.T || c0 + c >= p.HS) return vec4(0.0);
    return texelFetch(y4, int((b * p.T + l) * p.y_stride4 + p.y_off4 + (h * p.HS + c0 + c) / 4));
}
void store(uint r, uint c, float v) {
    uint row = r0 + r, j = c0 + c;
    if (row < p.T && j < p.HS) outp[(b * p.T + row) * p.out_stride + p.out_off + h * p.HS + j] = v * p.scale;
}
#define B_DIRECT 1
#include "gemm_smem.glsl"

void main() {
    uint tiles_r = (p.T + TILE - 1) / TILE, tiles_c = (p.HS + TILE - 1) / TILE, tiles = tiles_r * tiles_c;
    uint wg = group_index();
    if (wg >= p.B * p.NH * tiles) return;  // whole workgroups only: no barrier is skipped by some
    uint bh = wg / tiles, i = wg % tiles;
    b = bh / p.NH;
    h = bh % p.NH;
    r0 = (i / tiles_c) * TILE;
    c0 = (i % tiles_c) * TILE;
#if A_DIRECT
    gemm(p.causal != 0 ? r0 : 0, p.T);                              // t >= t2 >= r0
#else
    gemm(0, p.causal != 0 ? min(p.T, r0 + TILE) : p.T);             // t2 <= t < r0 + TILE
#endif
    gemm_store();
}
