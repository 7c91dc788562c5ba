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
static_assert(SMEM_INVOCATIONS == 256 && SMEM_BYTES == 16384, "vk/policy.cpp's smem_fits checks these limits");
constexpr uint32_t SMEM_TILE = 128;  // gemm_smem.glsl's TILE: each workgroup's tile of its output

// Workgroups for a rows x cols output in SMEM_TILE tiles (Program::dispatch counts WORKGROUP invocations a group).
inline uint64_t smem_tiles(uint32_t rows, uint32_t cols) {
    return uint64_t((rows + SMEM_TILE - 1) / SMEM_TILE) * ((cols + SMEM_TILE - 1) / SMEM_TILE);
}

// The device's limits allow them (KernelPolicy::smem_fits, which refuses ATTNLAB_MATMUL=smem and
// ATTNLAB_ATTENTION=smem with a clear error where they do not, instead of a failed pipeline).
inline bool smem_fits(const Context& ctx) { return ctx.policy().smem_fits; }
inline bool smem_default(const Context& ctx) { return !ctx.policy().cpu_device && smem_fits(ctx); }

}  // namespace attn::ops
