// Body of matmul_backward_tiled.comp and matmul_backward_tiled4.comp (DOUT_VEC4: dout and the forward output
// read as vec4 too, so every fetch carries four values: their rows are N4 = ceil(N/4) vec4s, N % 4 == 0 or rows
// padded with zeros, as cross-entropy writes lm_head's dlogits; padded, the forward output is not read: no ReLU).
#include "flags.glsl"
layout(binding = 0) uniform samplerBuffer dout_t;                     // (M, N) R32F, or (M, N4) vec4
layout(binding = 1) uniform samplerBuffer inp4;                       // (M, K/4) vec4
layout(binding = 2) uniform samplerBuffer w4;                         // (N, K/4) vec4
layout(binding = 3) uniform samplerBuffer out_t;                      // like dout: forward output (relu)
// dinp and dw are stored four at a time: engine/ops/matmul.h takes these kernels only for 16-byte offsets
layout(std430, binding = 4) buffer Dinp { vec4 dinp4[]; };            // (M, K/4)
layout(std430, binding = 5) writeonly buffer Dw { vec4 dw4[]; };      // (N, K/4), from row row0
layout(std430, binding = 6) writeonly buffer Db { float db[]; };      // (N,)
// invocations first .. first+count-1 of the whole job (dinp tiles, then dw tiles, then dbias; with DOUT_VEC4 the
// dw tiles at k0 == 0 sum dbias too, from the dout they read anyway, and there are no dbias invocations): a big job is
// dispatched in two parts, dinp and the rest, so that each part's cost is known (segmented programs).
// splits > 1: the dw and dbias sums over the M rows are cut into `splits` row ranges (more invocations for a
// GPU to run at once); range s writes its partial sums at s * stride in the Dw/Db bindings (both bound to one
// scratch buffer, dbias at db_off; stride a multiple of 4), and reduce_splits.comp adds them up. splits == 1:
// stride 0, db_off 0.
layout(push_constant) uniform P {
    uint M, N, K, has_bias, relu, want_dinp, accumulate, first, count, splits, stride, db_off, mask_in;
    uint row0;  // dw's binding starts at row row0 (a dispatch of one row range of a dw too large for one binding)
} p;
// Tiles per invocation (engine/ops/matmul.h counts invocations with the same numbers):
//   dinp: TRI rows m x TKI vec4 columns k;  dw: TRW rows n x TKW vec4 columns k
#ifdef DOUT_VEC4
// dinp's 16 rows (8 before): fewer fetches per multiply-add, ~10-20% faster on lavapipe, like the forward's 16x16;
// dw's rows stay 8 (16 lost where N is 32: too few tiles to fill the lanes)
const uint TRI = 16, TKI = 4, TRW = 8;
layout(constant_id = 0) const uint TKW = 4;  // 4 or 8, chosen per shape by engine/ops/matmul.h (matmul_dw_tkw)
#else
const uint TRI = 4, TKI = 2, TRW = 4, TKW = 2;
#endif

#ifdef DOUT_VEC4
// dout[m, 4*n4 .. 4*n4+3], relu-masked
vec4 g4(uint m, uint n4) {
    int idx = int(m * ((p.N + 3) / 4) + n4);
    vec4 d = texelFetch(dout_t, idx);
    if (F_RELU && p.relu != 0) d *= vec4(greaterThan(texelFetch(out_t, idx), vec4(0.0)));  // out > 0
    return d;
}
#else
float g(uint m, uint n) {
    int idx = int(m * p.N + n);
    float d = texelFetch(dout_t, idx).x;
    if (F_RELU && p.relu != 0 && texelFetch(out_t, idx).x <= 0.0) d = 0.0;
    return d;
}
#endif

void main() {
    uint i = gid();
    if (i >= p.count) return;
    i += p.first;
    uint K4 = p.K / 4;
    uint tiles_ki = (K4 + TKI - 1) / TKI, tiles_kw = (K4 + TKW - 1) / TKW;
    uint n_dinp = p.want_dinp != 0 ? ((p.M + TRI - 1) / TRI) * tiles_ki : 0;
    uint n_tiles_w = ((p.N + TRW - 1) / TRW) * tiles_kw;
    uint n_dw = n_tiles_w * p.splits;
    uint rows = (p.M + p.splits - 1) / p.splits;  // rows per split
    if (i < n_dinp) {
        uint m0 = (i / tiles_ki) * TRI, k0 = (i % tiles_ki) * TKI;
        vec4 acc[TRI][TKI];
        for (uint r = 0; r < TRI; r++)
            for (uint j = 0; j < TKI; j++) acc[r][j] = vec4(0.0);
#ifdef DOUT_VEC4
        for (uint n4 = 0; n4 < (p.N + 3) / 4; n4++) {
            vec4 d[TRI];
            for (uint r = 0; r < TRI; r++) d[r] = g4(min(m0 + r, p.M - 1), n4);
            // the four rows n of w, named: no component picked by a loop index (a stack access on CPU drivers);
            // rows past N (padding, where dout is 0) read as row N-1
            vec4 w0[TKI], w1[TKI], w2[TKI], w3[TKI];
            uint n = n4 * 4, n1 = min(n + 1, p.N - 1), n2 = min(n + 2, p.N - 1), n3 = min(n + 3, p.N - 1);
            for (uint j = 0; j < TKI; j++) {
                int kk = int(min(k0 + j, K4 - 1));
                w0[j] = texelFetch(w4, int(n * K4) + kk);
                w1[j] = texelFetch(w4, int(n1 * K4) + kk);
                w2[j] = texelFetch(w4, int(n2 * K4) + kk);
                w3[j] = texelFetch(w4, int(n3 * K4) + kk);
            }
            for (uint r = 0; r < TRI; r++)
                for (uint j = 0; j < TKI; j++)
                    acc[r][j] += d[r].x * w0[j] + d[r].y * w1[j] + d[r].z * w2[j] + d[r].w * w3[j];
        }
#else
        for (uint n = 0; n < p.N; n++) {
            vec4 wv[TKI];
            for (uint j = 0; j < TKI; j++) wv[j] = texelFetch(w4, int(n * K4 + min(k0 + j, K4 - 1)));
            for (uint r = 0; r < TRI; r++) {
                float d = g(min(m0 + r, p.M - 1), n);
                for (uint j = 0; j < TKI; j++) acc[r][j] += d * wv[j];
            }
        }
#endif
        for (uint r = 0; r < TRI; r++) {
            uint m = m0 + r;
            if (m >= p.M) break;
            for (uint j = 0; j < TKI; j++) {
                uint k4 = k0 + j;
                if (k4 >= K4) break;
                uint o = m * K4 + k4;
                // mask_in: the forward's input is a ReLU's output, and the gradient stored is the ReLU input's, so
                // that the matmul before it reads no mask (engine/ops/matmul.h); inp and dinp share their layout
                if (F_MASK_IN && p.mask_in != 0) acc[r][j] *= vec4(greaterThan(texelFetch(inp4, int(o)), vec4(0.0)));
                if (F_ADD && p.accumulate != 0) dinp4[o] += acc[r][j];
                else dinp4[o] = acc[r][j];
            }
        }
        return;
    }
    i -= n_dinp;
    if (i < n_dw) {
        // Neighbouring invocations share the operand row that is the narrower of the two and read
        // neighbouring parts of the wider one, so a workgroup streams less of it from memory.
        // split-major: the invocations of one row range run together and share its rows in cache
        uint split = i / n_tiles_w;
        i %= n_tiles_w;
        uint m_begin = split * rows, m_end = min(p.M, m_begin + rows);
        uint tiles_n = (p.N + TRW - 1) / TRW;
        uint n0 = (i / tiles_kw) * TRW, k0 = (i % tiles_kw) * TKW;
        if (p.K > p.N) n0 = (i % tiles_n) * TRW, k0 = (i / tiles_n) * TKW;
        vec4 acc[TRW][TKW];
        for (uint r = 0; r < TRW; r++)
            for (uint j = 0; j < TKW; j++) acc[r][j] = vec4(0.0);
#ifdef DOUT_VEC4
        // dbias[n0 .. n0+TRW-1] = the sum of the rows' d. Not specialised (F_BIAS): without the sums the rows' loop
        // compiles about 3x slower on lavapipe, with them as fast as before
        bool sum_bias = p.has_bias != 0 && k0 == 0;
        vec4 bsum[TRW / 4];
        for (uint r4 = 0; r4 < TRW / 4; r4++) bsum[r4] = vec4(0.0);
#endif
        uint m = m_begin;
#ifdef DOUT_VEC4
        // Four rows m at a time: each update of an accumulator then carries four multiply-adds a component instead of
        // one. The 8 x TKW vec4 accumulators do not fit in a CPU's registers, so their loads and stores bound this
        // loop on lavapipe (as the forward's dot products avoid); the fetches are the same per row.
        // (attn_bench_matmul on lavapipe, 2 cores of a Zen 4 VM: dw of the gpt shapes 7-11 -> 13-19 GFLOP/s at M 8192,
        // 13-16 -> 15-21 at M 2048; whole training steps changed less than their run-to-run noise, bench/RESULTS.md)
        for (; m + 4 <= m_end; m += 4) {
            vec4 i0[TKW], i1[TKW], i2[TKW], i3[TKW];
            for (uint j = 0; j < TKW; j++) {
                int kk = int(min(k0 + j, K4 - 1));
                i0[j] = texelFetch(inp4, int(m * K4) + kk);
                i1[j] = texelFetch(inp4, int((m + 1) * K4) + kk);
                i2[j] = texelFetch(inp4, int((m + 2) * K4) + kk);
                i3[j] = texelFetch(inp4, int((m + 3) * K4) + kk);
            }
            for (uint r4 = 0; r4 < TRW / 4; r4++) {  // the tile's n as vec4s of dout, components named
                uint n4 = min(n0 / 4 + r4, (p.N + 3) / 4 - 1);
                vec4 d0 = g4(m, n4), d1 = g4(m + 1, n4), d2 = g4(m + 2, n4), d3 = g4(m + 3, n4);
                if (sum_bias) bsum[r4] += ((d0 + d1) + d2) + d3;
                for (uint j = 0; j < TKW; j++) {
                    acc[r4 * 4][j] += d0.x * i0[j] + d1.x * i1[j] + d2.x * i2[j] + d3.x * i3[j];
                    acc[r4 * 4 + 1][j] += d0.y * i0[j] + d1.y * i1[j] + d2.y * i2[j] + d3.y * i3[j];
                    acc[r4 * 4 + 2][j] += d0.z * i0[j] + d1.z * i1[j] + d2.z * i2[j] + d3.z * i3[j];
                    acc[r4 * 4 + 3][j] += d0.w * i0[j] + d1.w * i1[j] + d2.w * i2[j] + d3.w * i3[j];
                }
            }
        }
#endif
        for (; m < m_end; m++) {  // the rest of the range (all of it with the scalar dout)
            vec4 iv[TKW];
            for (uint j = 0; j < TKW; j++) iv[j] = texelFetch(inp4, int(m * K4 + min(k0 + j, K4 - 1)));
#ifdef DOUT_VEC4
            for (uint r4 = 0; r4 < TRW / 4; r4++) {  // the tile's n as vec4s of dout, components named
                vec4 d = g4(m, min(n0 / 4 + r4, (p.N + 3) / 4 - 1));
                if (sum_bias) bsum[r4] += d;
                for (uint j = 0; j < TKW; j++) {
                    acc[r4 * 4][j] += d.x * iv[j];
                    acc[r4 * 4 + 1][j] += d.y * iv[j];
                    acc[r4 * 4 + 2][j] += d.z * iv[j];
                    acc[r4 * 4 + 3][j] += d.w * iv[j];
                }
            }
#else
            for (uint r = 0; r < TRW; r++) {
                float d = g(m, min(n0 + r, p.N - 1));
                for (uint j = 0; j < TKW; j++) acc[r][j] += d * iv[j];
            }
#endif
        }
        for (uint r = 0; r < TRW; r++) {
            uint n = n0 + r;
            if (n >= p.N) break;
            for (uint j = 0; j < TKW; j++) {
                uint k4 = k0 + j;
                if (k4 >= K4) break;
                dw4[(split * p.stride) / 4 + (n - p.row0) * K4 + k4] = acc[r][j];
            }
        }
#ifdef DOUT_VEC4
        if (sum_bias)
            for (uint r4 = 0; r4 < TRW / 4; r4++)
                for (uint e = 0; e < 4; e++) {
                    uint n = n0 + r4 * 4 + e;
                    if (n < p.N) db[split * p.stride + p.db_off + n] = bsum[r4][e];
                }
#endif
        return;
    }
#ifndef DOUT_VEC4
    i -= n_dw;
    if (F_BIAS && p.has_bias != 0 && i < p.N * p.splits) {
        uint split = i / p.N, n = i % p.N;
        float s = 0.0;
        for (uint m = split * rows; m < min(p.M, split * rows + rows); m++) s += g(m, n);
        db[split * p.stride + p.db_off + n] = s;
    }
#endif
}
