#version 450
// out(M,N) = inp(M,K) @ w(N,K)^T + bias(N), optional ReLU, optional residual(M,N) added last: the GPU kernel
// (K % 4 == 0). Each workgroup computes a BM x BN tile of out: 16-wide slices of K
// of both operands are staged in shared memory (each value fetched from memory once per workgroup, not once per
// invocation), the next slice fetched into registers while the current one is multiplied, and each invocation
// keeps an 8x8 sub-tile in registers: 4 shared-memory vec4 reads per 64 multiply-adds.
// Every loop has constant bounds and every array a constant index once unrolled: a dynamically indexed
// accumulator would live in (slow) local memory.
// CPU devices (lavapipe) keep matmul_forward_tiled: barriers cost more there than shared memory saves.
// On an NVIDIA H200 (attn_bench_matmul 16384): 22-27 TFLOP/s for the gpt preset's layers, against 3 with the
// tiled kernel and 10-12 with 64x64 tiles per workgroup of 64.
layout(binding = 0) uniform samplerBuffer inp4;                       // (M, K/4) vec4
layout(binding = 1) uniform samplerBuffer w4;                         // (N, K/4) vec4
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };   // (N,)
layout(std430, binding = 3) writeonly buffer Out { float outp[]; };   // (M, N)
layout(std430, binding = 4) readonly buffer Res { float res[]; };     // (M, N)
layout(push_constant) uniform P { uint M, N, K, has_bias, relu, has_residual; } p;
const uint BM = 128, BN = 128;  // the workgroup's tile of out (Program counts WORKGROUP invocations a group)
const uint TX = BN / 8, TY = BM / 8, NT = TX * TY;  // invocations: TY rows of TX
layout(local_size_x = NT) in;
const uint BK4 = 4;                       // K slice in vec4s (16 floats)
const uint LA = BM * BK4 / NT, LB = BN * BK4 / NT;  // vec4s each invocation fetches per slice
shared vec4 As[BK4 * 4][BM / 4];          // As[k][m / 4][m % 4] = inp[m0 + m, k0 + k]
shared vec4 Bs[BK4 * 4][BN / 4];          // Bs[k][n / 4][n % 4] = w[n0 + n, k0 + k]

uint m0, n0, K4;
vec4 ra[LA], rb[LB];  // the next slice, fetched while the current one is multiplied

void fetch(uint k0) {
    uint t = gl_LocalInvocationID.x;
    for (uint i = 0; i < LA; i++) {
        uint idx = t + i * NT, row = idx % BM, k = k0 + idx / BM;  // neighbouring invocations: neighbouring rows
        ra[i] = k < K4 ? texelFetch(inp4, int(min(m0 + row, p.M - 1) * K4 + k)) : vec4(0.0);  // rows clamped:
    }                                                                                       // computed, not stored
    for (uint i = 0; i < LB; i++) {
        uint idx = t + i * NT, row = idx % BN, k = k0 + idx / BN;
        rb[i] = k < K4 ? texelFetch(w4, int(min(n0 + row, p.N - 1) * K4 + k)) : vec4(0.0);  // partial slice: zeros
    }
}
void stage() {  // registers -> shared memory, transposed (k-major) so the multiply reads vec4s of rows
    uint t = gl_LocalInvocationID.x;
    for (uint i = 0; i < LA; i++) {
        uint idx = t + i * NT, row = idx % BM, k = 4 * (idx / BM);
        As[k][row / 4][row % 4] = ra[i].x;
        As[k + 1][row / 4][row % 4] = ra[i].y;
        As[k + 2][row / 4][row % 4] = ra[i].z;
        As[k + 3][row / 4][row % 4] = ra[i].w;
    }
    for (uint i = 0; i < LB; i++) {
        uint idx = t + i * NT, row = idx % BN, k = 4 * (idx / BN);
        Bs[k][row / 4][row % 4] = rb[i].x;
        Bs[k + 1][row / 4][row % 4] = rb[i].y;
        Bs[k + 2][row / 4][row % 4] = rb[i].z;
        Bs[k + 3][row / 4][row % 4] = rb[i].w;
    }
}
void store1(uint m, uint n, float s) {
    if (n >= p.N) return;
    s += p.has_bias != 0 ? bias[n] : 0.0;
    if (p.relu != 0) s = max(s, 0.0);
    if (p.has_residual != 0) s += res[m * p.N + n];
    outp[m * p.N + n] = s;
}
void store_row(uint m, uint n, vec4 lo, vec4 hi) {  // columns n .. n+3 and n + BN/2 .. n + BN/2 + 3
    if (m >= p.M) return;
    store1(m, n, lo.x); store1(m, n + 1, lo.y); store1(m, n + 2, lo.z); store1(m, n + 3, lo.w);
    n += BN / 2;
    store1(m, n, hi.x); store1(m, n + 1, hi.y); store1(m, n + 2, hi.z); store1(m, n + 3, hi.w);
}

void main() {
    // workgroup index: vkCmdDispatchBase (segmented programs) offsets gl_WorkGroupID, gl_NumWorkGroups.x is whole
    uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint tiles_n = (p.N + BN - 1) / BN;
    if (wg >= ((p.M + BM - 1) / BM) * tiles_n) return;  // the whole workgroup: no barrier is skipped by some
    m0 = (wg / tiles_n) * BM;
    n0 = (wg % tiles_n) * BN;
    K4 = p.K / 4;
    uint t = gl_LocalInvocationID.x, tx = t % TX, ty = t / TX;
    // this invocation's rows: ty*4 + {0..3} (a0) and BM/2 + ty*4 + {0..3} (a1); columns tx*4 + {0..3} (b0) and
    // BN/2 + tx*4 + {0..3} (b1). c<row><b>: four columns of one row.
    vec4 c00 = vec4(0), c01 = vec4(0), c10 = vec4(0), c11 = vec4(0), c20 = vec4(0), c21 = vec4(0), c30 = vec4(0),
         c31 = vec4(0), c40 = vec4(0), c41 = vec4(0), c50 = vec4(0), c51 = vec4(0), c60 = vec4(0), c61 = vec4(0),
         c70 = vec4(0), c71 = vec4(0);
    fetch(0);
    for (uint k0 = 0; k0 < K4; k0 += BK4) {
        stage();
        barrier();
        if (k0 + BK4 < K4) fetch(k0 + BK4);
        for (uint k = 0; k < BK4 * 4; k++) {
            vec4 a0 = As[k][ty], a1 = As[k][TY + ty], b0 = Bs[k][tx], b1 = Bs[k][TX + tx];
            c00 += a0.x * b0; c01 += a0.x * b1;
            c10 += a0.y * b0; c11 += a0.y * b1;
            c20 += a0.z * b0; c21 += a0.z * b1;
            c30 += a0.w * b0; c31 += a0.w * b1;
            c40 += a1.x * b0; c41 += a1.x * b1;
            c50 += a1.y * b0; c51 += a1.y * b1;
            c60 += a1.z * b0; c61 += a1.z * b1;
            c70 += a1.w * b0; c71 += a1.w * b1;
        }
        barrier();  // the next slice overwrites As and Bs
    }
    uint m = m0 + ty * 4, n = n0 + tx * 4;
    store_row(m, n, c00, c01);
    store_row(m + 1, n, c10, c11);
    store_row(m + 2, n, c20, c21);
    store_row(m + 3, n, c30, c31);
    m += BM / 2;
    store_row(m, n, c40, c41);
    store_row(m + 1, n, c50, c51);
    store_row(m + 2, n, c60, c61);
    store_row(m + 3, n, c70, c71);
}
