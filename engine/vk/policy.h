// The kernel policy: what each Vulkan context knows for choosing among an op's kernel variants, and what a user,
// a benchmark or a test forces. Built once when the Context is made, from the device's properties and the
// ATTNLAB_* environment variables (the one place the engine reads the environment; shaders/README.md lists them
// with the variant each forces); tests change it through Context::edit_policy. The ops' choosers (attention_block,
// matmul_kernel, row_splits, ... in engine/ops/*.h) read it together with the shapes they record.
#pragma once
#include <cstdint>
#include <string>

#include <vulkan/vulkan.h>

namespace attn {

enum class AttentionChoice { automatic, block, rows, smem };  // ATTNLAB_ATTENTION
enum class MatmulChoice { automatic, tiled, smem };           // ATTNLAB_MATMUL

struct KernelPolicy {
    // --- from the device ---
    // A CPU driver (lavapipe): fetches, not multiply-adds, set a kernel's time and barriers are dear, so the ops
    // take row and register-tiled kernels that fetch each input once for several outputs; GPUs take wide grids
    // and shared-memory tiles.
    bool cpu_device = false;
    // The device allows gemm_smem.glsl's workgroups: 256 invocations, 16 KiB of shared memory (ops/smem.h).
    bool smem_fits = false;
    uint32_t max_invocations = 0, max_shared_bytes = 0;  // those limits, for the error when smem is forced anyway

    // --- overrides (the defaults choose from the device and the shapes) ---
    AttentionChoice attention = AttentionChoice::automatic;  // ATTNLAB_ATTENTION=block|rows|smem, where shapes allow
    int attention_rows = 0;       // ATTNLAB_ATTENTION_ROWS=1..8: rows an invocation of the vec4 row kernels (0: device)
    bool attention_att4 = true;   // ATTNLAB_ATTENTION_ATT4=0: attention_backward4 reads att a float a fetch
    MatmulChoice matmul = MatmulChoice::automatic;  // ATTNLAB_MATMUL=tiled|smem, for K % 4 == 0
    bool layernorm_rows_in_registers = true;  // ATTNLAB_LAYERNORM_ROWS=memory: the row stays in texels
    int row_splits = 0;           // ATTNLAB_ROW_SPLITS=N: every backward sum over rows cut into N ranges (0: device)
    bool all_kernel_flags = false;  // ATTNLAB_KERNEL_FLAGS=all: every pipeline keeps every optional part
    bool narrow_tail = true;        // ATTNLAB_NARROW_TAIL=0: no narrow last workgroup on a CPU driver

    // The device's facts with the overrides the environment sets. Throws attn::Error naming the variable when a
    // value is not one it takes.
    static KernelPolicy for_device(const VkPhysicalDeviceProperties& props);
    // Throws attn::Error, naming the ATTNLAB_ variable, when an override cannot run on this device (smem forced
    // where it does not fit) or is out of range.
    void check() const;
};

// --- Steering a CPU Vulkan driver's threads ---
// lavapipe runs each dispatch on a pool of LP_NUM_THREADS threads (unset: one per core), read when an instance
// enumerates its devices; 0 runs it on the submitting thread alone. The lecture's small models are many tiny
// dispatches, for which waking a pool costs more than it gains, so Attention Lab sets it (process-wide, before the
// instance) from ContextOptions::cpu_threads: 1 -> LP_NUM_THREADS=0, N -> N. Other drivers ignore it.
void steer_cpu_driver_threads(int cpu_threads);
// Whether the user set LP_NUM_THREADS themselves (then it is left as it is).
bool cpu_driver_threads_set_by_user();
// Whether a CPU driver's dispatches run on the submitting thread alone (LP_NUM_THREADS=0), as replicas need.
bool cpu_driver_single_thread();

}  // namespace attn
