#version 450
// Backward of matmul_forward_tiled (K % 4 == 0), one dispatch with three index ranges:
//   dinp(M,K) (+)= dout(M,N) @ w(N,K)     tiles of 4 rows x 8 k
//   dw(N,K)    = dout^T(N,M) @ inp(M,K)   tiles of 4 n x 8 k
//   dbias(N)   = sum_m dout(M,N)
// When relu is set, dout is masked by the forward output > 0. Inputs read through texel buffers.
#extension GL_GOOGLE_include_directive : require
#include "index.glsl"
layout(binding = 0) uniform samplerBuffer dout1;                      // (M, N) R32F
layout(binding = 1) uniform samplerBuffer inp4;                       // (M, K/4) vec4
layout(binding = 2) uniform samplerBuffer w4;                         // (N, K/4) vec4
layout(binding = 3) uniform samplerBuffer out1;                       // (M, N) R32F forward output (relu)
layout(std430, binding = 4) buffer Dinp { float dinp[]; };            // (M, K)
layout(std430, binding = 5) writeonly buffer Dw { float dw[]; };      // (N, K)
layout(std430, binding = 6) writeonly buffer Db { float db[]; };      // (N,)
layout(push_constant) uniform P { uint M, N, K, has_bias, relu, want_dinp, accumulate; } p;
const uint TR = 4;  // rows of the tile (m for dinp, n for dw)
const uint TK = 2;  // vec4 columns of the tile (8 k)

float g(uint m, uint n) {
    int idx = int(m * p.N + n);
    float d = texelFetch(dout1, idx).x;
    if (p.relu != 0 && texelFetch(out1, idx).x <= 0.0) d = 0.0;
    return d;
}

void main() {
    uint i = gid();
    uint K4 = p.K / 4;
    uint tiles_k = (K4 + TK - 1) / TK;
    uint n_dinp = p.want_dinp != 0 ? ((p.M + TR - 1) / TR) * tiles_k : 0;
    uint n_dw = ((p.N + TR - 1) / TR) * tiles_k;
    if (i < n_dinp) {
        uint m0 = (i / tiles_k) * TR, k0 = (i % tiles_k) * TK;
        vec4 acc[TR][TK];
        for (uint r = 0; r < TR; r++)
            for (uint j = 0; j < TK; j++) acc[r][j] = vec4(0.0);
        for (uint n = 0; n < p.N; n++) {
            vec4 wv[TK];
            for (uint j = 0; j < TK; j++) wv[j] = texelFetch(w4, int(n * K4 + min(k0 + j, K4 - 1)));
            for (uint r = 0; r < TR; r++) {
                float d = g(min(m0 + r, p.M - 1), n);
                for (uint j = 0; j < TK; j++) acc[r][j] += d * wv[j];
            }
        }
        for (uint r = 0; r < TR; r++) {
            uint m = m0 + r;
            if (m >= p.M) break;
            for (uint j = 0; j < TK; j++) {
                uint k4 = k0 + j;
                if (k4 >= K4) break;
                for (uint e = 0; e < 4; e++) {
                    uint o = m * p.K + k4 * 4 + e;
                    dinp[o] = p.accumulate != 0 ? dinp[o] + acc[r][j][e] : acc[r][j][e];
                }
            }
        }
        return;
    }
    i -= n_dinp;
    if (i < n_dw) {
        uint n0 = (i / tiles_k) * TR, k0 = (i % tiles_k) * TK;
        vec4 acc[TR][TK];
        for (uint r = 0; r < TR; r++)
            for (uint j = 0; j < TK; j++) acc[r][j] = vec4(0.0);
        for (uint m = 0; m < p.M; m++) {
            vec4 iv[TK];
            for (uint j = 0; j < TK; j++) iv[j] = texelFetch(inp4, int(m * K4 + min(k0 + j, K4 - 1)));
            for (uint r = 0; r < TR; r++) {
                float d = g(m, min(n0 + r, p.N - 1));
                for (uint j = 0; j < TK; j++) acc[r][j] += d * iv[j];
            }
        }
        for (uint r = 0; r < TR; r++) {
            uint n = n0 + r;
            if (n >= p.N) break;
            for (uint j = 0; j < TK; j++) {
                uint k4 = k0 + j;
                if (k4 >= K4) break;
                for (uint e = 0; e < 4; e++) dw[n * p.K + k4 * 4 + e] = acc[r][j][e];
            }
        }
        return;
    }
    i -= n_dw;
    if (p.has_bias != 0 && i < p.N) {
        float s = 0.0;
        for (uint m = 0; m < p.M; m++) s += g(m, i);
        db[i] = s;
    }
}
