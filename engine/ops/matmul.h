// Linear layer: out = inp @ w^T + bias (optional ReLU); backward computes dinp, dw, dbias in one dispatch
// (two in a segmented program, and always two with the GPU's shared-memory kernels; one more when dw's sum over
// rows is split, see row_splits in reduce.h).
#pragma once
#include <algorithm>
#include <numeric>
#include <string>

#include "ops/reduce.h"
#include "ops/smem.h"
#include "vk/program.h"

namespace attn::ops {

struct MatmulPush {  // ldo, site, prob: matmul_forward_tiled's
    uint32_t M, N, K, has_bias, relu, has_residual, ldo, site = 0;
    float prob = 0;
};
static_assert(sizeof(MatmulPush) == 36);
// Dropout applied by matmul_forward to its output before the residual (matmul_forward_can_dropout): the mask of
// dropout_forward at site `site` with the key in `seed`.
struct MatmulDropout {
    BufferRange seed;
    uint32_t site = 0;
    float prob = 0;
};
struct MatmulBackPush {
    uint32_t M, N, K, has_bias, relu, want_dinp, accumulate, first = 0, count = 0, splits = 1, stride = 0, db_off = 0,
             mask_in = 0, row0 = 0;  // row0: the first row of dw its binding holds (matmul_backward_dw_rows)
};
static_assert(sizeof(MatmulBackPush) == 56);
struct MatmulDinpPush { uint32_t M, N, K, relu, accumulate; };                        // matmul_backward_dinp_smem
struct MatmulDwPush { uint32_t M, N, K, has_bias, relu, splits, stride, db_off; };   // matmul_backward_dw_smem

// K % 4 == 0 takes the tiled texel-buffer kernels; other shapes the plain ones (same results).
inline bool matmul_tiled(uint32_t K) { return K % 4 == 0; }

// Which kernels: `plain` (any K); `tiled`, register tiles (forward 16x16 outputs an invocation) read straight from
// memory (CPU devices: lavapipe, where barriers cost more than shared memory saves; GPUs whose limits are too small,
// ops/smem.h); `smem`, 128x128 tiles per workgroup of 256 staged through shared memory (GPUs;
// shaders/common/gemm_smem.glsl; on an H200 the forward is 8x faster than `tiled` for the gpt preset's layers). The backward takes `smem` when N % 4 == 0 too, `tiled` otherwise.
// ATTNLAB_MATMUL=tiled|smem (the policy's matmul) forces one of the two for K % 4 == 0.
enum class MatmulKernel { plain, tiled, smem };
inline MatmulKernel matmul_kernel(const Context& ctx, uint32_t K) {
    if (!matmul_tiled(K)) return MatmulKernel::plain;
    switch (ctx.policy().matmul) {
    case MatmulChoice::tiled: return MatmulKernel::tiled;
    case MatmulChoice::smem: return MatmulKernel::smem;  // KernelPolicy::check: the device's limits allow it
    case MatmulChoice::automatic: break;
    }
    return smem_default(ctx) ? MatmulKernel::smem : MatmulKernel::tiled;
}
// Rows of dw (N, K) one storage binding holds: all N, or fewer where dw passes the device's binding limit (lm_head's
// gradient with GPT-2's vocabulary on lavapipe). The tiled kernel then writes dw in row ranges, a dispatch each;
// each range starts on a dw tile (TRW, 8 rows).
inline uint64_t matmul_backward_dw_rows(const Context& ctx, uint32_t N, uint32_t K) {
    return std::min<uint64_t>(N, ctx.policy().rows_per_binding(uint64_t(K) * 4, 8));
}
inline bool matmul_backward_smem(const Context& ctx, uint32_t N, uint32_t K) {
    return matmul_kernel(ctx, K) == MatmulKernel::smem && N % 4 == 0 && matmul_backward_dw_rows(ctx, N, K) == N;
}

// Whether the tiled kernel stores four outputs at a time (matmul_forward_tiled4): rows a multiple of 4 floats, the
// output at a 16-byte offset, the residual (read as texels) at one a texel view may start at.
inline bool matmul_forward_vec4_out(const Context& ctx, BufferRange out, BufferRange residual, uint32_t ldo) {
    size_t align = std::max<size_t>(16, ctx.props().limits.minTexelBufferOffsetAlignment);
    return ldo % 4 == 0 && out.offset % 16 == 0 && (!residual.buffer || residual.offset % align == 0);
}
// Whether matmul_forward can apply dropout to its output itself (`drop`): the tiled kernel with vec4 rows (CPU
// devices); elsewhere the caller runs dropout_forward after it. One dispatch, the product never stored: the same bits
// (bench/RESULTS.md, "matmul with dropout").
inline bool matmul_forward_can_dropout(const Context& ctx, uint32_t N, uint32_t K, BufferRange out, BufferRange residual) {
    return matmul_kernel(ctx, K) == MatmulKernel::tiled && N % 4 == 0 && matmul_forward_vec4_out(ctx, out, residual, N);
}

// out (M,N) = inp (M,K) @ w (N,K)^T + bias (N), then ReLU when relu, then dropout when `drop` (prob > 0; see
// matmul_forward_can_dropout), then + residual (M,N) when given.
// ldo: out's row stride, N or (no residual, the tiled kernel: matmul_forward_ld) N rounded up to 4 with the
// columns past N written as 0, so that a row starts on a vec4 and the kernel stores four outputs at a time.
inline void matmul_forward(KernelCache& kc, Program& pr, BufferRange out, BufferRange inp, BufferRange w,
                           BufferRange bias, uint32_t M, uint32_t N, uint32_t K, bool has_bias, bool relu = false,
                           BufferRange residual = {}, uint32_t ldo = 0, const MatmulDropout* drop = nullptr) {
    if (ldo == 0) ldo = N;
    // an output past the device's storage-binding limit (lm_head's logits of a batch with GPT-2's vocabulary on
    // lavapipe) is written in ranges of rows, a dispatch each: every output is the same dot product, the same bits
    const KernelPolicy& pol = kc.context().policy();
    uint64_t rows = pol.rows_per_binding(uint64_t(ldo) * 4, std::lcm(pol.align_rows(K * 4), pol.align_rows(N * 4)));
    if (rows < M) {
        if (drop && drop->prob > 0)  // its mask is indexed by the element: a range would need its offset
            throw Error("internal error: matmul_forward applies dropout only to an output within one binding");
        auto at = [](BufferRange r, uint64_t byte0, uint64_t bytes) {
            return BufferRange(*r.buffer, r.offset + byte0, size_t(bytes));
        };
        for (uint64_t r0 = 0; r0 < M; r0 += rows) {
            uint64_t n = std::min<uint64_t>(rows, M - r0);
            matmul_forward(kc, pr, at(out, r0 * ldo * 4, n * ldo * 4), at(inp, r0 * K * 4, n * K * 4), w, bias,
                           uint32_t(n), N, K, has_bias, relu,
                           residual.buffer ? at(residual, r0 * N * 4, n * N * 4) : BufferRange{}, ldo);
        }
        return;
    }
    MatmulPush p{M, N, K, has_bias, relu, residual.buffer != nullptr, ldo};
    if (ldo != N && (ldo != (N + 3) / 4 * 4 || residual.buffer || matmul_kernel(kc.context(), K) != MatmulKernel::tiled))
        throw Error("internal error: matmul_forward pads rows to a multiple of 4 only for the tiled kernel, without a residual");
    bool dropout = drop && drop->prob > 0;
    if (dropout) {
        if (!matmul_forward_can_dropout(kc.context(), N, K, out, residual) || ldo != N || !drop->seed.buffer)
            throw Error("internal error: matmul_forward applies dropout only where matmul_forward_can_dropout says");
        p.site = drop->site;
        p.prob = drop->prob;
    }
    BufferRange res = residual.buffer ? residual : bias;  // any valid binding when unused
    switch (matmul_kernel(kc.context(), K)) {
    case MatmulKernel::smem:  // one workgroup per tile (Program counts WORKGROUP invocations a group)
        pr.dispatch(kc.get("matmul_forward_smem", "vvsss", sizeof p), {inp, w, bias, out, res}, p,
                    smem_tiles(M, N) * WORKGROUP, double(M) * N * K);
        return;
    case MatmulKernel::tiled: {  // one invocation per 16x16 tile (TM, TN in shaders/common/matmul_forward_tiled.glsl)
        uint64_t tiles = uint64_t((M + 15) / 16) * ((N + 15) / 16);
        // rows of a multiple of 4 and 16-byte aligned output (and residual): stores four outputs at a time
        bool vec4_out = matmul_forward_vec4_out(kc.context(), out, residual, ldo);
        if (ldo != N && !vec4_out) throw Error("internal error: matmul_forward's padded rows need a 16-byte offset");
        uint32_t flags = kflag::pick(has_bias, kflag::bias) | kflag::pick(relu, kflag::relu) |
                         kflag::pick(residual.buffer != nullptr, kflag::add) | kflag::pick(dropout, kflag::dropout);
        if (vec4_out)  // the residual as texels (any texel view when none), the dropout key (any buffer when none)
            pr.dispatch(kc.get("matmul_forward_tiled4", "vvssvs", sizeof p, 0, flags),
                        {inp, w, bias, out, residual.buffer ? residual : inp, dropout ? drop->seed : bias}, p, tiles,
                        double(M) * N * K);
        else
            pr.dispatch(kc.get("matmul_forward_tiled", "vvsss", sizeof p, 0, flags), {inp, w, bias, out, res}, p,
                        tiles, double(M) * N * K);
        return;
    }
    case MatmulKernel::plain: break;
    }
    pr.dispatch(kc.get("matmul_forward", 5, sizeof p), {inp, w, bias, out, res}, p, uint64_t(M) * N, double(M) * N * K);
}

// Vec4 columns of k per dw tile (TKW in shaders/common/matmul_backward_tiled.glsl): the vec4 kernel takes 8
// (8 x 32 tiles, half the fetches a multiply-add of 8 x 16) when K fills them and that still leaves two subgroups of
// 8 tiles, else 4 (with fewer, a second subgroup of 8 x 32 tiles runs mostly empty; attn_bench_matmul's figures in
// bench/RESULTS.md, "matmul dw tiles"); the scalar kernel 2.
inline uint32_t matmul_dw_tkw(uint32_t N, uint32_t K, bool dout4) {
    if (!dout4) return 2;
    return K >= 32 && uint64_t(N + 7) / 8 * ((K / 4 + 7) / 8) >= 16 ? 8 : 4;  // K < 32: 8 x 32 tiles half empty
}
// Invocations of the dw part with one row range: tiles of TRW x 4*TKW as in
// shaders/common/matmul_backward_tiled.glsl (the tiled kernels, K % 4 == 0).
inline uint64_t matmul_dw_tiles(uint32_t N, uint32_t K, bool dout4) {
    uint64_t TRW = dout4 ? 8 : 4, TKW = matmul_dw_tkw(N, K, dout4);
    return (N + TRW - 1) / TRW * ((K / 4 + TKW - 1) / TKW);
}
// How many row ranges matmul_backward's dw/dbias sums are split into on this device (1 for the plain kernels).
// On lavapipe ranges of 2048 rows, so that each dw tile's rows stay in cache and a big layer's dw has many
// workgroups for the thread pool (three runs of a scratch program at the gpt preset's M 16384, 2 threads, medians
// of 5 each: dw of 1536->384 27.5/32.8/26.0 GFLOP/s in one range, 38.9/35.2/32.1 in 8; of 384->1152
// 28.6/25.1/25.3 in one, 21.9/24.6/31.4 in 4, 25.7/36.2/34.4 in 8; bench/RESULTS.md).
// GPUs with the smem kernels: ranges for ~1000 workgroups of dw's tiles (each counted as WORKGROUP invocations,
// not its 256: with two or three of these workgroups resident per multiprocessor, several waves).
// dout_padded as in matmul_backward.
inline uint32_t matmul_backward_splits(const Context& ctx, uint32_t M, uint32_t N, uint32_t K,
                                       bool dout_padded = false) {
    uint32_t splits = 1;
    if (matmul_backward_smem(ctx, N, K)) splits = row_splits(ctx, M, smem_tiles(N, K) * WORKGROUP);
    else if (matmul_backward_dw_rows(ctx, N, K) < N) return 1;  // dw in row ranges: no room for partial sums of it
    else if (matmul_tiled(K)) splits = row_splits(ctx, M, matmul_dw_tiles(N, K, N % 4 == 0 || dout_padded), 2048);
    // every range's partial dw and dbias share one binding (matmul_split_stride floats each): as many as it holds
    uint64_t per_range = (uint64_t(N) * K + N + 3) / 4 * 16;
    return uint32_t(std::clamp<uint64_t>(ctx.policy().max_storage_range / per_range, 1, splits));
}
// Row stride (floats) for the gradient of an output of N columns that lets matmul_backward read it four at a
// time (dout_padded): N rounded up to a multiple of 4 when the tiled kernels serve this K, else N. lm_head's
// dlogits (N = vocabulary, 65 for tiny Shakespeare) use it: its backward then runs ~2x faster on lavapipe.
inline uint32_t matmul_dout_ld(uint32_t N, uint32_t K) { return matmul_tiled(K) ? (N + 3) / 4 * 4 : N; }
// Row stride (floats) matmul_forward can write an output of N columns in, four at a time: N rounded up to a multiple
// of 4 where the tiled kernel serves this K (lavapipe; lm_head's logits, V = 65: ~2x faster), else N.
inline uint32_t matmul_forward_ld(const Context& ctx, uint32_t N, uint32_t K) {
    return matmul_kernel(ctx, K) == MatmulKernel::tiled ? (N + 3) / 4 * 4 : N;
}

// Floats between two row ranges' partial dw (then dbias) in matmul_backward's scratch: a multiple of 4, so that
// each range's dw starts on a vec4.
inline uint32_t matmul_split_stride(uint32_t N, uint32_t K, bool has_bias) {
    return (N * K + (has_bias ? N : 0) + 3) / 4 * 4;
}
// Floats of scratch matmul_backward needs for `splits` row ranges (0 when not split).
inline size_t matmul_backward_scratch(uint32_t N, uint32_t K, bool has_bias, uint32_t splits) {
    return splits > 1 ? size_t(splits) * matmul_split_stride(N, K, has_bias) : 0;
}

// Whether matmul_backward's mask_in can be asked for these shapes (the tiled kernels; not the shared-memory ones).
inline bool matmul_backward_can_mask_in(const Context& ctx, uint32_t N, uint32_t K) {
    return matmul_tiled(K) && !matmul_backward_smem(ctx, N, K);
}

// What matmul_backward reads and writes, for a forward out (M,N) = relu?(inp (M,K) @ w (N,K)^T + bias (N)).
struct MatmulBackward {
    BufferRange dinp, dw, dbias;   // outputs: dinp (M,K) = or += (accumulate), dw (N,K) =, dbias (N) = (has_bias)
    BufferRange dout, inp, w, out;  // dout (M,N); `out` is the forward output, read only when relu
    uint32_t M = 0, N = 0, K = 0;
    bool has_bias = false, relu = false;
    bool want_dinp = true;    // false: dinp is neither written nor read (the first layer's input)
    bool accumulate = false;  // dinp += instead of =
    // splits > 1 (tiled and smem kernels; the plain ones ignore it): the sums over the M rows behind dw and dbias are
    // cut into that many row ranges written to `scratch` (matmul_backward_scratch floats), then added up by a second
    // pass.
    BufferRange scratch = {};
    uint32_t splits = 1;
    bool dout_padded = false;  // dout's rows are matmul_dout_ld(N, K) floats, zero past N (no relu)
    // (where matmul_backward_can_mask_in) `inp` is a ReLU's output and dinp is stored as the gradient of that ReLU's
    // input, masked where inp is not > 0, so that the matmul before the ReLU runs its backward without a mask (relu
    // false; the same bits): one fetch of inp an element of dinp instead of one of `out` for each of the 4-6 fetches
    // of every element of its dout (bench/RESULTS.md, "matmul backward mask_in").
    bool mask_in = false;
};
inline void matmul_backward(KernelCache& kc, Program& pr, const MatmulBackward& a) {
    auto [dinp, dw, dbias, dout, inp, w, out, M, N, K, has_bias, relu, want_dinp, accumulate, scratch, splits,
          dout_padded, mask_in] = a;
    MatmulBackPush p{M, N, K, has_bias, relu, want_dinp, accumulate};
    p.mask_in = mask_in;
    dout_padded = dout_padded && N % 4 != 0;
    const Kernel* k;
    // the tiled kernels store dinp and dw (or dw's row ranges in scratch) as vec4s: 16-byte offsets (parameters,
    // activations and scratch always are)
    if (M < 2) splits = 1;
    bool tiled = matmul_tiled(K) && (!want_dinp || dinp.offset % 16 == 0) &&
                 (splits > 1 ? scratch.offset % 16 == 0 : dw.offset % 16 == 0);
    if (dout_padded && (!tiled || relu))
        throw Error("internal error: matmul_backward's padded dout needs the tiled kernels and no ReLU");
    if (mask_in && (!want_dinp || !tiled || matmul_backward_smem(kc.context(), N, K)))
        throw Error("internal error: matmul_backward's mask_in needs dinp and the tiled kernels (matmul_backward_can_mask_in)");
    if (!tiled) splits = 1;
    uint64_t dw_rows = matmul_backward_dw_rows(kc.context(), N, K);
    if (dw_rows < N) {
        if (!tiled || !(N % 4 == 0 || dout_padded) || K > N)
            throw Error("internal error: matmul_backward writes dw in row ranges only with the tiled kernels, dout as "
                        "vec4 and K <= N");
        splits = 1;
    }
    if (splits > 1) {
        if (!scratch.buffer || scratch.size() < matmul_backward_scratch(N, K, has_bias, splits) * 4)
            throw Error("internal error: matmul_backward split over rows without enough scratch");
        p.splits = splits;
        p.stride = matmul_split_stride(N, K, has_bias);
        p.db_off = N * K;
    }
    BufferRange dw_out = splits > 1 ? scratch : dw, db_out = splits > 1 ? scratch : dbias;
    BufferRange fwd_out = relu ? out : dout;  // read only when relu
    double macs = double(M) * N * K;
    if (matmul_backward_smem(kc.context(), N, K)) {  // two GEMMs, one workgroup per tile of dinp, of dw per range
        if (want_dinp) {
            MatmulDinpPush pd{M, N, K, relu, accumulate};
            pr.dispatch(kc.get("matmul_backward_dinp_smem", "vvvs", sizeof pd), {dout, w, fwd_out, dinp}, pd,
                        smem_tiles(M, K) * WORKGROUP, macs);
        }
        MatmulDwPush pw{M, N, K, has_bias, relu, p.splits, p.stride, p.db_off};
        pr.dispatch(kc.get("matmul_backward_dw_smem", "vvvss", sizeof pw), {dout, inp, fwd_out, dw_out, db_out}, pw,
                    smem_tiles(N, K) * splits * WORKGROUP, macs);
        if (splits > 1) {
            pr.barrier("add up dw's row ranges");
            reduce_splits(kc, pr, dw, dbias, scratch, N * K, has_bias ? N : 0, splits, p.stride);
        }
        return;
    }
    std::initializer_list<BufferRange> bufs = {dout, inp, w, fwd_out, dinp, dw_out, db_out};
    uint64_t n_dinp, n_rest;  // invocations: dinp part, then dw and dbias
    if (tiled) {
        // tiles per invocation as in shaders/common/matmul_backward_tiled.glsl: dinp TRI x 4*TKI, dw TRW x 4*TKW
        bool dout4 = N % 4 == 0 || dout_padded;
        uint64_t TRI = dout4 ? 16 : 4, TKI = dout4 ? 4 : 2;
        n_dinp = want_dinp ? (M + TRI - 1) / TRI * ((K / 4 + TKI - 1) / TKI) : 0;
        // dbias: summed by dw's tiles with the vec4 kernel, by N more invocations with the scalar one
        n_rest = (matmul_dw_tiles(N, K, dout4) + (has_bias && !dout4 ? N : 0)) * splits;
        uint32_t flags = kflag::pick(relu, kflag::relu) | kflag::pick(want_dinp && accumulate, kflag::add) |
                         kflag::pick(has_bias, kflag::bias) | kflag::pick(p.mask_in != 0, kflag::mask_in);
        k = dout4 ? &kc.get("matmul_backward_tiled4", "vvvvsss", sizeof p, matmul_dw_tkw(N, K, true), flags)  // dout vec4
                       : &kc.get("matmul_backward_tiled", "tvvtsss", sizeof p, 0, flags);
    } else {
        n_dinp = want_dinp ? uint64_t(M) * K : 0;
        n_rest = uint64_t(N) * K + (has_bias ? N : 0);
        k = &kc.get("matmul_backward", 7, sizeof p);
    }
    if (dw_rows < N) {  // dinp, then dw's row ranges (n-major tiles: each range is a run of invocations)
        uint64_t tiles_kw = (K / 4 + matmul_dw_tkw(N, K, true) - 1) / matmul_dw_tkw(N, K, true), TRW = 8;
        BufferRange first_rows(*dw.buffer, dw.offset, size_t(dw_rows) * K * 4);
        if (n_dinp) {
            p.count = uint32_t(n_dinp);
            pr.dispatch(*k, {dout, inp, w, fwd_out, dinp, first_rows, db_out}, p, n_dinp, macs);
        }
        for (uint64_t r0 = 0; r0 < N; r0 += dw_rows) {
            uint64_t rows = std::min<uint64_t>(dw_rows, N - r0);
            p.row0 = uint32_t(r0);
            p.first = uint32_t(n_dinp + r0 / TRW * tiles_kw);
            p.count = uint32_t((rows + TRW - 1) / TRW * tiles_kw);
            BufferRange part(*dw.buffer, dw.offset + r0 * K * 4, size_t(rows) * K * 4);
            pr.dispatch(*k, {dout, inp, w, fwd_out, dinp, part, db_out}, p, p.count, macs * double(rows) / N);
        }
        return;
    }
    if (!pr.segmented()) {  // one dispatch: fewest dispatches for small models
        p.count = uint32_t(n_dinp + n_rest);
        pr.dispatch(*k, bufs, p, n_dinp + n_rest, macs * (want_dinp ? 2 : 1));
    } else {
        // two dispatches, dinp (cost M*N*K) and dw + dbias (cost M*N*K): each part's workgroups cost alike
        if (n_dinp) {
            p.count = uint32_t(n_dinp);
            pr.dispatch(*k, bufs, p, n_dinp, macs);
        }
        p.first = uint32_t(n_dinp);
        p.count = uint32_t(n_rest);
        pr.dispatch(*k, bufs, p, n_rest, macs);
    }
    if (splits > 1) {
        pr.barrier("add up dw's row ranges");
        reduce_splits(kc, pr, dw, dbias, scratch, N * K, has_bias ? N : 0, splits, p.stride);
    }
}

}  // namespace attn::ops
