// The GPU matmul core shared by matmul_forward_smem, matmul_backward_dinp_smem and matmul_backward_dw_smem:
// a workgroup of 256 computes a 128x128 tile C[r][c] = sum over l of A[r][l] * B[c][l]. 16-wide slices of l of
// both operands are staged in shared memory (each value fetched from memory once per workgroup, not once per
// invocation), the next slice fetched into registers while the current one is multiplied, and each invocation
// keeps an 8x8 sub-tile of C in registers: 4 shared-memory vec4 reads per 64 multiply-adds.
// Every loop has constant bounds and every array a constant index once unrolled: a dynamically indexed
// accumulator would live in (slow) local memory.
//
// The includer defines A_DIRECT and B_DIRECT (0 or 1) and, before including, the loaders
//   vec4 load_a(uint r, uint l)   A_DIRECT 0: A[r][l .. l+3] (l a multiple of 4; 4 values along l)
//                                 A_DIRECT 1: A[r .. r+3][l] (r a multiple of 4; 4 values along r)
//   vec4 load_b(uint c, uint l)   the same for B
// with r, c local to the tile (0..127) and l absolute. Past the end of the reduction (l >= its length, or >= the
// l_end given to gemm) a loader must return zeros (partial slices add nothing); rows or columns past the operand
// may be clamped instead (computed, never stored), except where ROW_SUMS is defined: there they must be zeros too.
// "Direct" operands are stored with r (or c) contiguous in memory and go to shared memory as
// they are; the others are transposed on the way in.
const uint TILE = 128, TX = 16, TY = 16, NT = TX * TY, SL = 16;  // tile, invocations, slice of l
layout(local_size_x = NT) in;
shared vec4 As[SL][TILE / 4];  // As[l][r / 4][r % 4] = A[r][l0 + l]
shared vec4 Bs[SL][TILE / 4];  // Bs[l][c / 4][c % 4] = B[c][l0 + l]
vec4 ra[2], rb[2];             // this invocation's share of the next slice: 2 x 128 x 16 / 256 vec4s

// Program dispatches WORKGROUP (64) invocations' worth per group: n = groups * WORKGROUP. The group index:
// vkCmdDispatchBase (segmented programs) offsets gl_WorkGroupID; a grid cut along y keeps gl_NumWorkGroups.x the
// whole row, one cut along x has a single row (y = 0), so the index below holds for both.
uint group_index() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

void gemm_fetch(uint l0) {
    uint t = gl_LocalInvocationID.x;
    for (uint i = 0; i < 2; i++) {
        uint idx = t + i * NT;  // neighbouring invocations: neighbouring rows (transposed) or vec4s (direct)
#if A_DIRECT
        ra[i] = load_a(4 * (idx % 32), l0 + idx / 32);
#else
        ra[i] = load_a(idx % TILE, l0 + 4 * (idx / TILE));
#endif
#if B_DIRECT
        rb[i] = load_b(4 * (idx % 32), l0 + idx / 32);
#else
        rb[i] = load_b(idx % TILE, l0 + 4 * (idx / TILE));
#endif
    }
}
// S[l .. l+3][row] = v.xyzw for the vec4 `idx` of a transposed operand's slice (GLSL passes no shared arrays)
#define STAGE_TRANSPOSED(S, idx, v)                                   \
    {                                                                 \
        uint row_ = (idx) % TILE, l_ = 4 * ((idx) / TILE);            \
        S[l_][row_ / 4][row_ % 4] = (v).x;                            \
        S[l_ + 1][row_ / 4][row_ % 4] = (v).y;                        \
        S[l_ + 2][row_ / 4][row_ % 4] = (v).z;                        \
        S[l_ + 3][row_ / 4][row_ % 4] = (v).w;                        \
    }
void gemm_stage() {
    uint t = gl_LocalInvocationID.x;
    for (uint i = 0; i < 2; i++) {
        uint idx = t + i * NT;
#if A_DIRECT
        As[idx / 32][idx % 32] = ra[i];
#else
        STAGE_TRANSPOSED(As, idx, ra[i])
#endif
#if B_DIRECT
        Bs[idx / 32][idx % 32] = rb[i];
#else
        STAGE_TRANSPOSED(Bs, idx, rb[i])
#endif
    }
}

// This invocation's part of C: rows ty*4 + {0..3} and 64 + ty*4 + {0..3}, columns tx*4 + {0..3} and
// 64 + tx*4 + {0..3}; c<row><half>: four columns of one row. rs0, rs1: the sums over l of A's rows ty*4 .. +3
// and 64 + ty*4 .. +3 (dbias, in the dw kernel).
vec4 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71, rs0, rs1;

// C over l = l_begin .. l_end-1. Call from uniform control flow. The last slice reaches past l_end when
// l_end - l_begin is not a multiple of 16: the loaders return zeros there (or, for attention's causal products,
// l_end is a multiple of 16 or the matrix is zero there).
void gemm(uint l_begin, uint l_end) {
    uint t = gl_LocalInvocationID.x, tx = t % TX, ty = t / TX;
    c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = c60 = c61 = c70 = c71 = vec4(0.0);
    rs0 = rs1 = vec4(0.0);
    gemm_fetch(l_begin);
    for (uint l0 = l_begin; l0 < l_end; l0 += SL) {
        gemm_stage();
        barrier();
        if (l0 + SL < l_end) gemm_fetch(l0 + SL);
        for (uint l = 0; l < SL; l++) {
            vec4 a0 = As[l][ty], a1 = As[l][TY + ty], b0 = Bs[l][tx], b1 = Bs[l][TX + tx];
            c00 += a0.x * b0; c01 += a0.x * b1;
            c10 += a0.y * b0; c11 += a0.y * b1;
            c20 += a0.z * b0; c21 += a0.z * b1;
            c30 += a0.w * b0; c31 += a0.w * b1;
            c40 += a1.x * b0; c41 += a1.x * b1;
            c50 += a1.y * b0; c51 += a1.y * b1;
            c60 += a1.z * b0; c61 += a1.z * b1;
            c70 += a1.w * b0; c71 += a1.w * b1;
#ifdef ROW_SUMS
            rs0 += a0;
            rs1 += a1;
#endif
        }
        barrier();  // the next slice overwrites As and Bs
    }
}

// Hands every element of this invocation's part of C to the includer's `void store(uint r, uint c, float v)`
// (tile-local r and c, possibly outside the operands: store checks).
void store4(uint r, uint c, vec4 v) {
    store(r, c, v.x);
    store(r, c + 1, v.y);
    store(r, c + 2, v.z);
    store(r, c + 3, v.w);
}
void store_row(uint r, vec4 lo, vec4 hi) {
    uint c = (gl_LocalInvocationID.x % TX) * 4;
    store4(r, c, lo);
    store4(r, c + TILE / 2, hi);
}
void gemm_store() {
    uint r = (gl_LocalInvocationID.x / TX) * 4;
    store_row(r, c00, c01);
    store_row(r + 1, c10, c11);
    store_row(r + 2, c20, c21);
    store_row(r + 3, c30, c31);
    r += TILE / 2;
    store_row(r, c40, c41);
    store_row(r + 1, c50, c51);
    store_row(r + 2, c60, c61);
    store_row(r + 3, c70, c71);
}
