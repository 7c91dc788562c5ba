// Body of matmul_forward_tiled.comp and matmul_forward_tiled4.comp (OUT_VEC4: N % 4 == 0, the output and bias
// written and read as vec4, the residual read as RGBA32F texels, and dropout possible before the residual).
#include "flags.glsl"
layout(binding = 0) uniform samplerBuffer inp4;                       // (M, K/4) vec4
layout(binding = 1) uniform samplerBuffer w4;                         // (N, K/4) vec4
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };   // (N,)
#ifdef OUT_VEC4
#include "philox.glsl"
layout(std430, binding = 3) writeonly buffer Out { vec4 out4[]; };    // (M, N/4)
layout(binding = 4) uniform samplerBuffer res4;                       // (M, N/4) vec4
layout(std430, binding = 5) readonly buffer Seed { uvec2 key; };      // dropout's key for this step
#else
layout(std430, binding = 3) writeonly buffer Out { float outp[]; };   // (M, N)
layout(std430, binding = 4) readonly buffer Res { float res[]; };     // (M, N)
#endif
// ldo: out's row stride (N, or with OUT_VEC4 N rounded up to 4, the columns past N stored as 0; no residual then).
// OUT_VEC4 with prob > 0: out = residual + dropout(inp @ w^T + bias), as dropout_forward4 of the product (dropout
// site `site`, element index m * N + n: the same mask and the same bits; ldo == N).
layout(push_constant) uniform P { uint M, N, K, has_bias, relu, has_residual, ldo, site; float prob; } p;
// 16 x 16 outputs per invocation: 32 fetches per 1024 multiply-adds. On lavapipe a fetch costs per lane whatever the
// vector width, so fewer fetches per multiply-add win even though the tile spills out of registers (16 x 8, 32 x 16
// and 16 x 32 measured in between or slower: bench/RESULTS.md, "matmul forward tile"). engine/ops/matmul.h counts the
// tiles with the same numbers.
const uint TM = 16, TN = 16;
void main() {
    uint tiles_n = (p.N + TN - 1) / TN;
    uint i = gid();
    if (i >= ((p.M + TM - 1) / TM) * tiles_n) return;
    uint m0 = (i / tiles_n) * TM, n0 = (i % tiles_n) * TN;
    uint K4 = p.K / 4;
    int arow[TM], wrow[TN];
    for (uint r = 0; r < TM; r++) arow[r] = int(min(m0 + r, p.M - 1) * K4);  // clamped: out-of-range rows are computed, not stored
    for (uint c = 0; c < TN; c++) wrow[c] = int(min(n0 + c, p.N - 1) * K4);
    float acc[TM][TN];
    for (uint r = 0; r < TM; r++)
        for (uint c = 0; c < TN; c++) acc[r][c] = 0.0;
    for (uint k = 0; k < K4; k++) {
        vec4 a[TM], b[TN];
        for (uint r = 0; r < TM; r++) a[r] = texelFetch(inp4, arow[r] + int(k));
        for (uint c = 0; c < TN; c++) b[c] = texelFetch(w4, wrow[c] + int(k));
        for (uint r = 0; r < TM; r++)
            for (uint c = 0; c < TN; c++) acc[r][c] += dot(a[r], b[c]);
    }
#ifdef OUT_VEC4
    // rows of ldo % 4 == 0: a tile's columns are two whole vec4s (or one, or none past ldo); one vec4 store per four
    // outputs; columns past N (padding) come out 0
    vec4 b[TN / 4];
    bvec4 keep[TN / 4];
    for (uint c4 = 0; c4 < TN / 4; c4++) {
        uint n = n0 + 4 * c4, l = p.N - 1;
        b[c4] = vec4(0.0);
        if (F_BIAS && p.has_bias != 0) b[c4] = vec4(bias[min(n, l)], bias[min(n + 1, l)], bias[min(n + 2, l)], bias[min(n + 3, l)]);
        keep[c4] = lessThan(uvec4(n, n + 1, n + 2, n + 3), uvec4(p.N));
    }
    uvec2 k2 = key;  // once: a storage-buffer load is a loop over the lanes on lavapipe
    for (uint r = 0; r < TM; r++) {
        uint m = m0 + r;
        if (m >= p.M) break;
        for (uint c4 = 0; c4 < TN / 4; c4++) {
            uint n = n0 + 4 * c4;
            if (n >= p.ldo) break;
            vec4 s = vec4(acc[r][4 * c4], acc[r][4 * c4 + 1], acc[r][4 * c4 + 2], acc[r][4 * c4 + 3]) + b[c4];
            if (F_RELU && p.relu != 0) s = max(s, vec4(0.0));
            uint o = (m * p.ldo + n) / 4;
            if (F_DROPOUT && p.prob > 0.0) s = mix(vec4(0.0), s / (1.0 - p.prob), dropout_keep4(k2, p.site, o, p.prob));
            if (F_ADD && p.has_residual != 0) s = texelFetch(res4, int(o)) + s;
            out4[o] = mix(vec4(0.0), s, keep[c4]);
        }
    }
#else
    float b[TN];  // loaded once a tile (storage loads are per-lane loops on lavapipe), clamped like wrow
    for (uint c = 0; c < TN; c++) b[c] = F_BIAS && p.has_bias != 0 ? bias[min(n0 + c, p.N - 1)] : 0.0;
    for (uint r = 0; r < TM; r++) {
        uint m = m0 + r;
        if (m >= p.M) break;
        for (uint c = 0; c < TN; c++) {
            uint n = n0 + c;
            if (n >= p.N) break;
            float s = acc[r][c] + b[c];
            if (F_RELU && p.relu != 0) s = max(s, 0.0);
            if (F_ADD && p.has_residual != 0) s += res[m * p.N + n];
            outp[m * p.N + n] = s;
        }
    }
#endif
}
