// Whether this device takes the shared-memory tiled kernels (shaders/common/gemm_smem.glsl and its users):
// GPUs do, when their limits allow a workgroup of 256 invocations with 16 KiB of shared memory (the Vulkan minimum
// guarantees 128 invocations and exactly 16 KiB); CPU devices (lavapipe) never by default, where barriers cost
// more than shared memory saves (engine/ops/matmul.h, engine/ops/attention.h).
#pragma once
#include <string>

#include "vk/check.h"
#include "vk/context.h"

namespace attn::ops {

constexpr uint32_t SMEM_INVOCATIONS = 256, SMEM_BYTES = 16384;  // gemm_smem.glsl: local_size_x, As + Bs
constexpr uint32_t SMEM_TILE = 128;  // gemm_smem.glsl's TILE: each workgroup's tile of its output

// Workgroups for a rows x cols output in SMEM_TILE tiles (Program::dispatch counts WORKGROUP invocations a group).
inline uint64_t smem_tiles(uint32_t rows, uint32_t cols) {
    return uint64_t((rows + SMEM_TILE - 1) / SMEM_TILE) * ((cols + SMEM_TILE - 1) / SMEM_TILE);
}

inline bool smem_fits(const Context& ctx) {
    const auto& l = ctx.props().limits;
    return l.maxComputeWorkGroupInvocations >= SMEM_INVOCATIONS && l.maxComputeWorkGroupSize[0] >= SMEM_INVOCATIONS &&
           l.maxComputeSharedMemorySize >= SMEM_BYTES;
}
// For ATTN_MATMUL=smem / ATTN_ATTENTION=smem: a clear error instead of a failed pipeline.
inline void require_smem_fits(const Context& ctx, const char* var) {
    if (!smem_fits(ctx))
        throw Error(std::string(var) + "=smem: this device allows " +
                    std::to_string(ctx.props().limits.maxComputeWorkGroupInvocations) + " invocations and " +
                    std::to_string(ctx.props().limits.maxComputeSharedMemorySize) +
                    " bytes of shared memory per workgroup, the shared-memory kernels need " +
                    std::to_string(SMEM_INVOCATIONS) + " and " + std::to_string(SMEM_BYTES) + ": unset " + var);
}
inline bool smem_default(const Context& ctx) {
    return ctx.props().deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU && smem_fits(ctx);
}

}  // namespace attn::ops
