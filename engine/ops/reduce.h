// Sums over many rows split into row ranges: a GPU runs far more invocations at once than a layer has
// outputs (dw of a 384x1152 linear layer is 3456 tiles of 8x16; LayerNorm's dgamma 96 vec4s), so the
// backward kernels can cut their sums over the B*T rows into `splits` ranges, write partial sums to a
// scratch buffer, and reduce_splits adds them up in a fixed order (deterministic).
#pragma once
#include <algorithm>

#include "vk/program.h"

namespace attn::ops {

struct ReduceSplitsPush { uint32_t L1, L2, splits, stride; };
static_assert(sizeof(ReduceSplitsPush) == 16);

// How many row ranges to cut a sum over `rows` rows into, when one range gives `invocations` invocations.
// GPUs: enough ranges for ~64k invocations, each range at least 64 rows, at most 64 ranges.
// CPU devices (lavapipe): 2 cores are filled by the outputs alone; ranges of cpu_rows rows where a kernel's
// inputs then stay in cache (cpu_rows 0: never split; matmul_backward_splits gives its measurements).
// The policy's row_splits (ATTNLAB_ROW_SPLITS=n) forces n everywhere (tests, benchmarks).
inline uint32_t row_splits(const Context& ctx, uint32_t rows, uint64_t invocations, uint32_t cpu_rows = 0) {
    const KernelPolicy& p = ctx.policy();
    if (p.row_splits >= 1) return uint32_t(std::min<long>(p.row_splits, std::max<uint32_t>(1, rows)));
    if (invocations == 0) return 1;
    if (p.cpu_device) return cpu_rows ? (rows + cpu_rows - 1) / cpu_rows : 1;
    uint64_t want = (65536 + invocations - 1) / invocations;
    uint64_t most = std::max<uint64_t>(1, std::min<uint64_t>(64, rows / 64));
    return uint32_t(std::clamp<uint64_t>(want, 1, most));
}

// out1 (L1) = sum_s part[s*stride + i], out2 (L2) = sum_s part[s*stride + L1 + j], s = 0 .. splits-1
inline void reduce_splits(KernelCache& kc, Program& pr, BufferRange out1, BufferRange out2, BufferRange part,
                          uint32_t L1, uint32_t L2, uint32_t splits, uint32_t stride) {
    ReduceSplitsPush p{L1, L2, splits, stride};
    pr.dispatch(kc.get("reduce_splits", 3, sizeof p), {part, out1, L2 ? out2 : out1}, p, uint64_t(L1) + L2,
                double(L1 + L2) * splits);
}

}  // namespace attn::ops
