#version 450
// matmul backward, the GPU kernel for dw and dbias (K % 4 == 0, N % 4 == 0): dw(N,K) = dpre^T(N,M) @ inp(M,K),
// dbias(N) = sum over m of dpre, dpre = dout masked by out > 0 when the forward applied ReLU. One 128x128 tile of
// dw per workgroup of 256 (shaders/common/gemm_smem.glsl: C = dw, A = dpre^T, B = inp^T, l = m); the tiles of
// the first column also sum dbias. splits > 1: the sums over the M rows are cut into `splits` row ranges (more
// workgroups than dw has tiles); range s writes its partial sums at s * stride (dbias at db_off), and
// reduce_splits.comp adds them up (as matmul_backward_tiled; engine/ops/reduce.h).
#extension GL_GOOGLE_include_directive : require
layout(binding = 0) uniform samplerBuffer dout4;                      // (M, N/4) vec4
layout(binding = 1) uniform samplerBuffer inp4;                       // (M, K/4) vec4
layout(binding = 2) uniform samplerBuffer out4;                       // (M, N/4) vec4: forward output (relu)
layout(std430, binding = 3) writeonly buffer Dw { float dw[]; };      // (N, K), or splits x stride
layout(std430, binding = 4) writeonly buffer Db { float db[]; };      // (N,), or at db_off in each split
layout(push_constant) uniform P { uint M, N, K, has_bias, relu, splits, stride, db_off; } p;
uint n0, k0, m_end, base;
vec4 load_a(uint r, uint l) {  // dpre[l][n0 + r .. n0 + r + 3]
    if (l >= m_end || n0 + r >= p.N) return vec4(0.0);
    int idx = int(l * (p.N / 4) + (n0 + r) / 4);
    vec4 d = texelFetch(dout4, idx);
    if (p.relu != 0) d *= vec4(greaterThan(texelFetch(out4, idx), vec4(0.0)));
    return d;
}
vec4 load_b(uint c, uint l) {  // inp[l][k0 + c .. k0 + c + 3]
    return l < m_end && k0 + c < p.K ? texelFetch(inp4, int(l * (p.K / 4) + (k0 + c) / 4)) : vec4(0.0);
}
void store(uint r, uint c, float s) {
    uint n = n0 + r, k = k0 + c;
    if (n < p.N && k < p.K) dw[base + n * p.K + k] = s;
}
#define A_DIRECT 1
#define B_DIRECT 1
#define ROW_SUMS 1
#include "gemm_smem.glsl"

void store_db(uint r, vec4 v) {  // dbias[n0 + r .. n0 + r + 3]
    for (uint e = 0; e < 4; e++)
        if (n0 + r + e < p.N) db[base + p.db_off + n0 + r + e] = v[e];
}

void main() {
    uint wg = group_index(), tiles_k = (p.K + TILE - 1) / TILE, tiles = ((p.N + TILE - 1) / TILE) * tiles_k;
    if (wg >= tiles * p.splits) return;  // the whole workgroup: no barrier is skipped by some
    uint split = wg / tiles, i = wg % tiles;  // split-major, as matmul_backward_tiled
    n0 = (i / tiles_k) * TILE;
    k0 = (i % tiles_k) * TILE;
    uint rows = (p.M + p.splits - 1) / p.splits, m_begin = min(p.M, split * rows);
    m_end = min(p.M, m_begin + rows);
    base = split * p.stride;
    gemm(m_begin, m_end);
    gemm_store();
    uint t = gl_LocalInvocationID.x;
    if (p.has_bias != 0 && k0 == 0 && t % TX == 0) {  // one invocation per 4 rows of the first column of tiles
        store_db((t / TX) * 4, rs0);
        store_db(TILE / 2 + (t / TX) * 4, rs1);
    }
}
