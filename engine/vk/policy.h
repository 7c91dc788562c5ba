// The kernel policy: what each Vulkan context knows for choosing among an op's kernel variants, and what a user,
// a benchmark or a test forces. Built once when the Context is made, from the device's properties and the
// ATTNLAB_* environment variables (the one place the engine reads the environment; shaders/README.md lists them
// with the variant each forces); tests change it through Context::edit_policy. The ops' choosers (attention_block,
// matmul_kernel, row_splits, ... in engine/ops/*.h) read it together with the shapes they record.
#pragma once
#include <cstdint>
#include <numeric>
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
    // A CPU driver that runs each dispatch on the submitting thread alone (LP_NUM_THREADS=0 when the context was
    // made): one core a device, so that more devices (replicas) use the other cores.
    bool cpu_single_thread = false;
    uint32_t max_invocations = 0, max_shared_bytes = 0;  // those limits, for the error when smem is forced anyway
    // The most bytes one storage-buffer binding spans: the device's maxStorageBufferRange, or less where
    // ATTNLAB_MAX_BINDING_KIB says (tests of the kernels that cut a larger tensor into several bindings: the flat
    // parameters for AdamW, a vocabulary's rows of the token embedding's gradient, a batch's logits).
    uint64_t max_storage_range = 0;
    uint64_t binding_align = 16;  // the larger of the offset alignments of storage and texel bindings (and 16)
    // Rows of row_bytes whose start keeps a binding aligned: a range of rows begins on a multiple of this
    uint64_t align_rows(uint64_t row_bytes) const { return binding_align / std::gcd(row_bytes, binding_align); }
    // How many rows of row_bytes one storage binding may span, rounded down to a multiple of `multiple` and of
    // align_rows (at least that multiple).
    uint64_t rows_per_binding(uint64_t row_bytes, uint64_t multiple = 1) const {
        uint64_t m = std::lcm(multiple, align_rows(row_bytes));
        uint64_t rows = max_storage_range / row_bytes / m * m;
        return rows ? rows : m;
    }

    // --- overrides (the defaults choose from the device and the shapes) ---
    AttentionChoice attention = AttentionChoice::automatic;  // ATTNLAB_ATTENTION=block|rows|smem, where shapes allow
    int attention_rows = 0;       // ATTNLAB_ATTENTION_ROWS=1..8: rows an invocation of the vec4 row kernels (0: device)
    bool attention_att4 = true;   // ATTNLAB_ATTENTION_ATT4=0: attention_backward4 reads att a float a fetch
    MatmulChoice matmul = MatmulChoice::automatic;  // ATTNLAB_MATMUL=tiled|smem, for K % 4 == 0
    bool layernorm_rows_in_registers = true;  // ATTNLAB_LAYERNORM_ROWS=memory: the row stays in texels
    int row_splits = 0;           // ATTNLAB_ROW_SPLITS=N: every backward sum over rows cut into N ranges (0: device)
    bool all_kernel_flags = false;  // ATTNLAB_KERNEL_FLAGS=all: every pipeline keeps every optional part
    bool narrow_tail = true;        // ATTNLAB_NARROW_TAIL=0: no narrow last workgroup on a CPU driver
    // Buffer::upload/download (tests only): false sends every device buffer through a staging buffer, as on a
    // discrete GPU, even where the host can map device memory; staging_bytes: the most staged at a time.
    bool direct_copies = true;
    uint64_t staging_bytes = uint64_t(64) << 20;

    // --- dividing a training step's work (from the device and the model's multiply-adds a step) ---
    // On a CPU device a step of more multiply-adds than k_segment_above is cut into submits of about k_submit_budget
    // each, so that on its single queue the window's frames run between them (the full gpt preset's step takes a
    // minute on lavapipe). Smaller models, and every model on a GPU (where the gpt preset's step takes a fraction of
    // a second and each submit's wait would cost more than it gives), keep one submit a step, the fastest. Whatever
    // the device, two steps in a row longer than k_long_step_s (a slow GPU, a big model) are re-recorded as submits
    // of about k_submit_s each (Trainer::step).
    static constexpr double k_segment_above = 2e9, k_submit_budget = 2e8;
    static constexpr double k_long_step_s = 0.25, k_submit_s = 0.05;
    // Multiply-adds a submit of a training step records (0: the whole step in one submit).
    double submit_budget(double step_macs) const {
        return cpu_device && step_macs > k_segment_above ? k_submit_budget : 0;
    }
    // Threads a dispatch on a CPU driver (ContextOptions::cpu_threads, decided before the context exists): 1, the
    // submitting thread without lavapipe's pool, for models whose steps are one submit (below k_segment_above):
    // waking the pool for each of their tiny dispatches costs more than a second core gives, and replicas use the
    // other cores; 0, the driver's pool of a thread per core, for bigger ones (bench/RESULTS.md, "one thread and
    // replicas").
    static int cpu_threads_for(double step_macs) { return step_macs < k_segment_above ? 1 : 0; }
    // Devices a training step is split over (data parallelism, Trainer::replicas_for): on a CPU driver running
    // dispatches on one thread, a model below k_segment_above takes up to `most` (one a core, at most the batch
    // size); GPUs and bigger models 1 (one device is faster).
    int replicas_for(double step_macs, int most) const {
        if (!cpu_single_thread || step_macs >= k_segment_above) return 1;
        return most > 1 ? most : 1;
    }

    // The device's facts with the overrides the environment sets. Throws attn::Error naming the variable when a
    // value is not one it takes.
    // cpu_single_thread is the Context's to set (it knows the driver's thread setting).
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
