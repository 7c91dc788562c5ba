// Masked multi-head self-attention (all heads of all batch elements in each dispatch) and its backward.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>

#include "ops/smem.h"
#include "vk/program.h"

namespace attn::ops {

struct AttentionPush { uint32_t B, T, NH, HS, causal, site; float prob; };
static_assert(sizeof(AttentionPush) == 28);
struct AttentionBackPush { uint32_t B, T, NH, HS, phase, site; float prob; uint32_t causal; };
static_assert(sizeof(AttentionBackPush) == 32);

// Where the row kernels run (CPU devices, short blocks; see attention_smem below), head sizes that are a multiple
// of 4 (up to 128) take the vec4 ones (attention_*4.comp): each texel fetch feeds 4 multiply-adds. Other head
// sizes take the scalar ones; all match the CPU reference.
inline bool attention_vec4(uint32_t HS) { return HS % 4 == 0 && HS <= 128; }
// attention_forward4's specialisation constant: HS / 4 in bits 0-7, and T / 4 in bits 8-15 when the row of scores
// stays in registers (T % 4 == 0, T <= 16), else 0 there
inline uint32_t attention_forward4_spec(uint32_t T, uint32_t HS) { return HS / 4 | (T % 4 == 0 && T <= 16 ? T / 4 : 0) << 8; }

// On CPU devices the lecture's short blocks (T <= 8, T * HS/4 <= 64: single-head, layernorm) take
// attention_backward_block and (T % 4 == 0) attention_forward_block, one invocation per (b, h) that fetches each row
// once instead of once per row (forward) or pair of rows (backward): on lavapipe a fetch costs per lane, and these
// kernels are bound by fetches (bench/RESULTS.md, "attention block kernels"). A GPU keeps the row kernels: B * NH
// invocations would leave it idle. The policy's attention override (ATTNLAB_ATTENTION=block|rows) forces either
// where the shapes allow.
inline bool attention_block(const Context& ctx, uint32_t T, uint32_t HS) {
    if (!attention_vec4(HS) || T > 8 || T * (HS / 4) > 64) return false;
    const KernelPolicy& p = ctx.policy();
    if (p.attention != AttentionChoice::automatic) return p.attention == AttentionChoice::block;
    return p.cpu_device;
}
// Rows of dq (or of dk and dv) one invocation of attention_backward4 computes: on CPU devices 4, so that each row of
// k and v (or of dout, out and q) is fetched once for four (on lavapipe fetches, not multiply-adds, set the time);
// GPUs 1, for more invocations. ATTNLAB_ATTENTION_ROWS=n forces n (1-8).
inline uint32_t attention_backward_rows(const Context& ctx) {
    const KernelPolicy& p = ctx.policy();
    if (p.attention_rows > 0) return uint32_t(p.attention_rows);
    return p.cpu_device ? 4 : 1;
}
// attention_backward4's specialisation constant: HS / 4 in bits 0-7, RB in bits 8-15, bit 16 set (RB > 1, blocks of
// T <= 64) where (b, h) varies fastest between invocations (with the row blocks fastest, the lanes of a causal head
// loop as long as the longest block; longer blocks keep the blocks fastest, whose neighbours read the same rows).
// Bit 17: T % 4 == 0: dropout's Philox blocks of 4 elements start on rows' and row blocks' first elements, so each is
// computed once for its 4 elements instead of once an element.
// Bit 18 (with 17; `att` bound at an offset a vec4 texel view may take): att read as vec4s, 4 keys a fetch, in the
// query rows' loop (then always in groups of 4 keys) and, with RB % 4 == 0, by the key invocations (the same bits;
// the policy's attention_att4 false, ATTNLAB_ATTENTION_ATT4=0, keeps one a fetch). Measurements of each choice:
// bench/RESULTS.md, "attention backward".
inline uint32_t attention_backward4_spec(uint32_t T, uint32_t HS, uint32_t RB, bool att4 = false) {
    return HS / 4 | RB << 8 | (RB > 1 && T <= 64 ? 1u << 16 : 0u)  // GPUs (RB 1) keep t fastest
           | (T % 4 == 0 ? 1u << 17 : 0u) | (T % 4 == 0 && att4 ? 1u << 18 : 0u);
}
// The forward's 4 query rows an invocation (attention_forward_multirow): on CPU devices where T % 4 == 0, T <= 32 and
// HS % 4 == 0, HS <= 64 (and the block kernels do not take the shape), unless ATTNLAB_ATTENTION_ROWS=1 keeps one
// row an invocation (attention_forward4, the same bits). Each row of k and v is fetched once for 4 rows; longer rows
// and wider heads spill too many registers to gain (bench/RESULTS.md, "attention forward rows").
inline bool attention_forward_multirow(const Context& ctx, uint32_t T, uint32_t HS) {
    if (!attention_vec4(HS) || T % 4 != 0 || T > 32 || HS > 64 || attention_block(ctx, T, HS)) return false;
    return ctx.policy().cpu_device && attention_backward_rows(ctx) > 1;
}
inline uint32_t attention_forward_multirow_spec(uint32_t T, uint32_t HS) { return HS / 4 | (T / 4) << 8; }
// Their specialisation constant: HS / 4 in bits 0-7, T in bits 8-15 (the loops over rows unroll).
inline uint32_t attention_block_spec(uint32_t T, uint32_t HS) { return HS / 4 | T << 8; }

// GPUs (T % 4 == 0, HS % 4 == 0) compute attention as products of tiles staged in shared memory
// (attention_nt_smem, attention_softmax, attention_pv_smem, attention_ptv_smem; shaders/common/gemm_smem.glsl);
// CPU devices keep the row-per-invocation kernels (fewer dispatches, no barriers: what lavapipe runs fastest).
// ATTNLAB_ATTENTION=rows|smem forces either where the shapes allow (block: the block kernels above).
inline bool attention_smem(const Context& ctx, uint32_t T, uint32_t HS) {
    if (T % 4 != 0 || HS % 4 != 0) return false;
    const KernelPolicy& p = ctx.policy();
    if (p.attention != AttentionChoice::automatic) return p.attention == AttentionChoice::smem;
    // short blocks fill a sliver of a 128x128 tile: the row kernels stay below 64 (bench/RESULTS-GPU.md)
    return smem_default(ctx) && T >= 64;
}
struct AttnNtPush {  // attention_nt_smem
    uint32_t B, T, NH, HS, causal, site;
    float prob;
    uint32_t mode, x_stride4, x_off4, y_stride4, y_off4;
    float scale;
};
struct AttnPvPush {  // attention_pv_smem, attention_ptv_smem
    uint32_t B, T, NH, HS, causal, site;
    float prob;
    uint32_t dropout, y_stride4, y_off4, out_stride, out_off;
    float scale;
};
struct AttnSoftmaxPush { uint32_t B, T, NH, causal, phase; };  // attention_softmax

// Dropout on the attention weights: probability, Philox site id, and the buffer holding this step's key.
struct AttnDropout {
    float prob = 0;
    uint32_t site = 0;
    BufferRange seed;  // (uvec2,) must be bound even when prob = 0
};

namespace detail {
// mat (B,NH,T,T) [:, :, t, t2] = scale * X[b,t,h,:] . Y[b,t2,h,:] (mode 0) or . * dropout keep/scale (mode 1)
inline void attention_nt(KernelCache& kc, Program& pr, BufferRange mat, BufferRange x, uint32_t x_stride4,
                         uint32_t x_off4, BufferRange y, uint32_t y_stride4, uint32_t y_off4, uint32_t B, uint32_t T,
                         uint32_t NH, uint32_t HS, bool causal, const AttnDropout& drop, uint32_t mode, float scale) {
    AttnNtPush p{B, T, NH, HS, causal, drop.site, drop.prob, mode, x_stride4, x_off4, y_stride4, y_off4, scale};
    pr.dispatch(kc.get("attention_nt_smem", "vvss", sizeof p), {x, y, mat, drop.seed}, p,
                uint64_t(B) * NH * smem_tiles(T, T) * WORKGROUP, double(B) * NH * T * T * HS * (causal ? 0.5 : 1.0));
}
// out[b, row, out_off + h*HS + j] = scale * (P' @ Y) (ptv false) or (P'^T @ Y) (ptv true), P (B,NH,T,T)
inline void attention_pv(KernelCache& kc, Program& pr, bool ptv, BufferRange out, uint32_t out_stride,
                         uint32_t out_off, BufferRange P, bool dropout, BufferRange y, uint32_t y_stride4,
                         uint32_t y_off4, uint32_t B, uint32_t T, uint32_t NH, uint32_t HS, bool causal,
                         const AttnDropout& drop, float scale) {
    AttnPvPush p{B, T, NH, HS, causal, drop.site, drop.prob, dropout, y_stride4, y_off4, out_stride, out_off, scale};
    pr.dispatch(kc.get(ptv ? "attention_ptv_smem" : "attention_pv_smem", "vvss", sizeof p), {P, y, out, drop.seed}, p,
                uint64_t(B) * NH * smem_tiles(T, HS) * WORKGROUP, double(B) * NH * T * T * HS * (causal ? 0.5 : 1.0));
}
inline void attention_softmax(KernelCache& kc, Program& pr, BufferRange att, BufferRange dpre, uint32_t B,
                              uint32_t T, uint32_t NH, bool causal, uint32_t phase) {
    AttnSoftmaxPush p{B, T, NH, causal, phase};
    pr.dispatch(kc.get("attention_softmax", 2, sizeof p), {att, dpre}, p, uint64_t(B) * NH * T * WORKGROUP,
                double(B) * NH * T * T);
}
}  // namespace detail

// out (B,T,NH*HS), att (B,NH,T,T) from qkv (B,T,3*NH*HS)
inline void attention_forward(KernelCache& kc, Program& pr, BufferRange out, BufferRange att, BufferRange qkv,
                              uint32_t B, uint32_t T, uint32_t NH, uint32_t HS, bool causal, const AttnDropout& drop) {
    if (attention_smem(kc.context(), T, HS)) {  // scores, softmax, att @ v
        uint32_t C4 = NH * HS / 4;
        float scale = 1.0f / std::sqrt(float(HS));
        detail::attention_nt(kc, pr, att, qkv, 3 * C4, 0, qkv, 3 * C4, C4, B, T, NH, HS, causal, drop, 0, scale);
        pr.barrier("softmax reads the scores");
        detail::attention_softmax(kc, pr, att, att, B, T, NH, causal, 0);
        pr.barrier("att @ v reads att");
        detail::attention_pv(kc, pr, false, out, NH * HS, 0, att, true, qkv, 3 * C4, 2 * C4, B, T, NH, HS, causal, drop,
                             1.0f);
        return;
    }
    AttentionPush p{B, T, NH, HS, causal, drop.site, drop.prob};
    uint32_t drop_flags = kflag::pick(drop.prob > 0.0f, kflag::dropout);
    // cost for segmented programs: q.k and att @ v (half masked when causal), x4 as these row-per-invocation
    // kernels do about a quarter of the tiled matmuls' multiply-adds per second
    double macs = 4.0 * B * NH * T * T * HS * (causal ? 0.5 : 1.0);
    if (attention_block(kc.context(), T, HS) && T % 4 == 0) {  // one invocation per (b, h): the whole (T,T) block
        if (att.offset % 16 != 0) throw Error("internal error: attention_forward needs att on a 16-byte offset");
        pr.dispatch(kc.get("attention_forward_block", "vsss", sizeof p, attention_block_spec(T, HS), drop_flags),
                    {qkv, att, out, drop.seed}, p, uint64_t(B) * NH, macs * 2);
        return;
    }
    if (attention_forward_multirow(kc.context(), T, HS)) {  // one invocation per 4 query rows
        if (att.offset % 16 != 0) throw Error("internal error: attention_forward needs att on a 16-byte offset");
        pr.dispatch(kc.get("attention_forward_multirow", "vsss", sizeof p, attention_forward_multirow_spec(T, HS), drop_flags),
                    {qkv, att, out, drop.seed}, p, uint64_t(B) * NH * (T / 4), macs * 2);
        return;
    }
    const char* name = attention_vec4(HS) ? "attention_forward4" : "attention_forward";
    // attention_forward4 reads and writes att's rows as vec4s when T % 4 == 0
    if (attention_vec4(HS) && T % 4 == 0 && att.offset % 16 != 0)
        throw Error("internal error: attention_forward needs att on a 16-byte offset");
    // the vec4 kernel is specialised for HS/4 (constant_id 0, bits 0-7): its loops unroll, q and the output row stay in
    // registers; and for T/4 (bits 8-15) when the row of scores stays in registers too (T % 4 == 0, T <= 16: faster
    // at the lecture's T 8, no gain at 32; bench/RESULTS.md, "attention forward rows")
    uint32_t spec = attention_forward4_spec(T, HS);
    pr.dispatch(attention_vec4(HS) ? kc.get(name, "vsss", sizeof p, spec, drop_flags) : kc.get(name, "tsss", sizeof p, 0, drop_flags),
                {qkv, att, out, drop.seed}, p,
                uint64_t(B) * NH * T, macs * 2);
}

// dqkv (B,T,3C) from dout (B,T,C); att and out (B,T,C) are the forward's; dpre (B,NH,T,T) is scratch (the vec4
// row kernel needs none: it takes the softmax's row term from dout . out). `causal` as in the forward.
inline void attention_backward(KernelCache& kc, Program& pr, BufferRange dqkv, BufferRange dpre, BufferRange dout,
                               BufferRange qkv, BufferRange att, BufferRange out, uint32_t B, uint32_t T, uint32_t NH,
                               uint32_t HS, bool causal, const AttnDropout& drop) {
    if (attention_smem(kc.context(), T, HS)) {  // datt, the softmax's backward, then dq, dk, dv
        uint32_t C = NH * HS, C4 = C / 4;
        float scale = 1.0f / std::sqrt(float(HS));
        detail::attention_nt(kc, pr, dpre, dout, C4, 0, qkv, 3 * C4, 2 * C4, B, T, NH, HS, causal, drop, 1, 1.0f);
        pr.barrier("the softmax's backward reads datt");
        detail::attention_softmax(kc, pr, att, dpre, B, T, NH, causal, 1);
        pr.barrier("dq, dk, dv read dpre");
        detail::attention_pv(kc, pr, false, dqkv, 3 * C, 0, dpre, false, qkv, 3 * C4, C4, B, T, NH, HS, causal, drop, scale);
        detail::attention_pv(kc, pr, true, dqkv, 3 * C, C, dpre, false, qkv, 3 * C4, 0, B, T, NH, HS, causal, drop, scale);
        detail::attention_pv(kc, pr, true, dqkv, 3 * C, 2 * C, att, true, dout, C4, 0, B, T, NH, HS, causal, drop, 1.0f);
        return;
    }
    AttentionBackPush p{B, T, NH, HS, 0, drop.site, drop.prob, causal};
    uint32_t drop_flags = kflag::pick(drop.prob > 0.0f, kflag::dropout);
    double macs = 4.0 * B * NH * T * T * HS * (causal ? 0.5 : 1.0);  // per product, as in the forward
    if (attention_block(kc.context(), T, HS)) {  // one invocation per (b, h): the whole (T,T) block
        const Kernel& k = kc.get("attention_backward_block", "vvtvss", sizeof p, attention_block_spec(T, HS), drop_flags);
        pr.dispatch(k, {dout, qkv, att, out, dqkv, drop.seed}, p, uint64_t(B) * NH, macs * 6);
        return;
    }
    if (attention_vec4(HS)) {  // one invocation per RB query rows (dq) and per RB key rows (dk, dv)
        uint32_t RB = attention_backward_rows(kc.context());
        size_t align = std::max<size_t>(16, kc.context().props().limits.minTexelBufferOffsetAlignment);
        bool att4 = att.offset % align == 0 && kc.context().policy().attention_att4;
        const Kernel& k = kc.get("attention_backward4", "vvtvssv", sizeof p, attention_backward4_spec(T, HS, RB, att4),
                                 drop_flags);
        // binding 6: att as vec4s, or (unused) any vec4 view
        pr.dispatch(k, {dout, qkv, att, out, dqkv, drop.seed, att4 ? att : out}, p,
                    uint64_t(B) * NH * ((T + RB - 1) / RB) * 2, macs * 6);
        return;
    }
    const Kernel& k = kc.get("attention_backward", "tttssst", sizeof p, 0, drop_flags);
    pr.dispatch(k, {dout, qkv, att, dpre, dqkv, drop.seed, dpre}, p, uint64_t(B) * NH * T, macs);
    pr.barrier("phase 1 reads every row of dpre written by phase 0");
    p.phase = 1;
    // one invocation per element of dqkv
    pr.dispatch(k, {dout, qkv, att, dpre, dqkv, drop.seed, dpre}, p, uint64_t(B) * T * 3 * NH * HS, macs * 3);
}

}  // namespace attn::ops
