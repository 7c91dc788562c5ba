// Compute kernels (pipelines from embedded SPIR-V) and Programs: command buffers recorded once, replayed.
#pragma once
#include <chrono>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vk/buffer.h"
#include "vk/context.h"

namespace attn {

constexpr uint32_t WORKGROUP = 64;  // local_size_x of every element-wise shader (shaders/common/index.glsl)

// Specialisation constant 2 of a shader (shaders/common/flags.glsl): which of its optional parts a pipeline keeps.
// Mesa 22.3's lavapipe runs the body of an `if` on a push constant even when it is false, its lanes masked off
// (fetches and all): a part a dispatch never needs costs as if it ran (the matmul backward's ReLU mask, one more fetch
// for each of dout's, in layers without ReLU) unless the pipeline is specialised without it. The push constants still
// decide; a pipeline without a part must only be given push constants that leave it unused (the ops ensure it).
namespace kflag {
constexpr uint32_t relu = 1;     // a ReLU (matmul forward), its mask (matmul backward)
constexpr uint32_t add = 2;      // adds to what is there: a residual (matmul and dropout forward), dinp += (backward)
constexpr uint32_t bias = 4;     // a bias, its gradient
constexpr uint32_t dropout = 8;  // dropout: on the attention weights, or a residual branch's in an epilogue
constexpr uint32_t pos = 16;     // position embeddings
constexpr uint32_t mask_in = 32; // matmul backward: dinp masked where the forward's input is not > 0 (a ReLU's output)
constexpr uint32_t all = 0xFFFFFFFFu;  // unspecialised: every part, as the push constants ask
inline uint32_t pick(bool on, uint32_t flag) { return on ? flag : 0u; }
}  // namespace kflag

// One compute pipeline: set 0 holds one buffer per binding, typed by `layout`, one letter per binding:
//   's' storage buffer, 't' uniform texel buffer of R32F, 'v' uniform texel buffer of RGBA32F (vec4),
//   'u' uniform buffer (a few constants every invocation reads alike).
// Texel buffers are how inputs are read fast on lavapipe (vector gathers instead of scalar loops); a uniform buffer
// read at constant offsets is one scalar load there for all lanes.
class Kernel {
public:
    // spec: the value of specialization constant 0 (e.g. a head size the shader unrolls its loops for);
    // 0 leaves the shader's default. flags: specialisation constant 2 (kflag; kflag::all: the shader's default).
    Kernel(Context& ctx, const std::string& name, const std::string& layout, uint32_t push_bytes, uint32_t spec = 0,
           uint32_t flags = kflag::all);
    Kernel(const Kernel&) = delete;
    Kernel& operator=(const Kernel&) = delete;
    const std::string& name() const { return m_name; }
    uint32_t bindings() const { return uint32_t(m_layout_str.size()); }
    const std::string& layout_string() const { return m_layout_str; }
    uint32_t push_bytes() const { return m_push_bytes; }
    // The pipelines are made on first use, by the thread recording (as KernelCache::get makes kernels): on CPU
    // drivers each costs tens of milliseconds, and a kernel whose every dispatch fits in its narrow workgroups
    // (below) never needs the wide one.
    VkPipeline pipeline() const;
    // The same shader with workgroups of `lanes` invocations (a CPU driver's vector width) instead of WORKGROUP, for
    // the tail of a dispatch;
    // VK_NULL_HANDLE when the shader's workgroup size is fixed (it does not include shaders/common/index.glsl: shared
    // memory, barriers).
    VkPipeline narrow_pipeline(uint32_t lanes) const;
    VkPipelineLayout layout() const { return m_layout; }
    VkDescriptorSetLayout set_layout() const { return m_set_layout; }
    int pipelines_made() const { return (m_pipeline ? 1 : 0) + (m_narrow ? 1 : 0); }

private:
    VkPipeline make_pipeline(uint32_t lanes) const;  // lanes 0: the shader's own workgroup size
    std::string m_name, m_layout_str;
    uint32_t m_push_bytes;
    Handle<VkShaderModule> m_module;
    Handle<VkDescriptorSetLayout> m_set_layout;
    Handle<VkPipelineLayout> m_layout;
    mutable Handle<VkPipeline> m_pipeline;
    VkDevice m_dev = VK_NULL_HANDLE;
    uint32_t m_spec = 0, m_flags = kflag::all;
    bool m_resizable = false;            // the SPIR-V decorates specialisation constant 1 (index.glsl's local_size_x_id)
    mutable uint32_t m_narrow_lanes = 0;
    mutable Handle<VkPipeline> m_narrow;
};

// Pipelines are compiled once per context (the first use JIT-compiles on CPU drivers) and shared.
class KernelCache {
public:
    explicit KernelCache(Context& ctx) : m_ctx(ctx) {}
    // All storage buffers.
    const Kernel& get(const std::string& name, uint32_t bindings, uint32_t push_bytes, uint32_t flags = kflag::all) {
        return get(name, std::string(bindings, 's'), push_bytes, 0, flags);
    }
    const Kernel& get(const std::string& name, const std::string& layout, uint32_t push_bytes, uint32_t spec = 0,
                      uint32_t flags = kflag::all);
    Context& context() { return m_ctx; }
    // Pipelines compiled so far, over every kernel (start-up cost: tens of milliseconds each on lavapipe).
    int pipelines_made() const {
        int n = 0;
        for (auto& [key, k] : m_kernels) n += k->pipelines_made();
        return n;
    }

private:
    Context& m_ctx;
    std::map<std::string, std::unique_ptr<Kernel>> m_kernels;
};

// A command buffer recorded once (per shape) and submitted many times, with its descriptor sets,
// a fence and two timestamps around the whole thing.
class Program {
public:
    // profile: a timestamp after every dispatch, read back by kernel_times() after run().
    // submit_budget: 0 = the whole program is one submit (fastest for small models). Otherwise the
    // program is cut into several command buffers of at most about that many multiply-adds each (big
    // dispatches are split into workgroup ranges with vkCmdDispatchBase), submitted one after another:
    // on a single-queue device (lavapipe) the window's frames then slip in between, so a big model's
    // minute-long step does not freeze the UI.
    explicit Program(Context& ctx, bool profile = false, double submit_budget = 0);
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;

    void begin();
    // Dispatches ceil(n / WORKGROUP) workgroups, split over y when x would exceed the device limit. On a CPU driver
    // the last, partial workgroup runs as workgroups of its vector width instead (Kernel::narrow_pipeline): there a
    // workgroup's vector passes whose lanes have all returned cost most of what busy ones do (the lecture's attention,
    // 16 heads a step: 35 -> 12 us).
    // cost: the dispatch's multiply-adds (or comparable work), which only decides where a segmented
    // program is cut; 0 estimates a few per invocation (element-wise kernels).
    void dispatch(const Kernel& k, std::initializer_list<BufferRange> buffers, const void* push, size_t push_bytes,
                  uint64_t n_invocations, double cost = 0);
    template <typename P>
    void dispatch(const Kernel& k, std::initializer_list<BufferRange> buffers, const P& push, uint64_t n,
                  double cost = 0) {
        dispatch(k, buffers, &push, sizeof(P), n, cost);
    }
    bool segmented() const { return m_budget > 0; }
    size_t submit_count() const { return m_used; }
    // Makes every earlier write (shader or transfer) visible to every later read. `why` documents the hazard.
    void barrier(const char* why);
    void copy(const Buffer& src, size_t src_off, const Buffer& dst, size_t dst_off, size_t bytes);
    void fill_zero(const Buffer& dst, size_t offset = 0, size_t bytes = 0);
    void end();
    bool recorded() const { return m_recorded; }
    size_t dispatch_count() const { return m_dispatches; }
    // Dispatch commands recorded: dispatch_count(), plus the extra pieces a segmented program cut dispatches into.
    size_t piece_count() const { return m_pieces; }

    // Submits and waits. Returns the GPU time of the whole program in milliseconds: this run's when profiling, else
    // the last one measured, at most k_time_every ago (reading it back costs a CPU driver as much as a submit).
    double run();
    // Whether the last run read its GPU time back (run() returned that run's time, not an earlier one's).
    bool last_run_timed() const { return m_timed_now; }
    // The same, asking `stop` (if set) between the submits of a segmented program: true ends the run there and it
    // returns false, the program's outputs then incomplete (for work that is thrown away when stopped: a forward
    // pass, never a training step). gpu_ms: the GPU time of a whole run, as run() returns it.
    bool run_unless(const std::function<bool()>& stop, double* gpu_ms = nullptr);
    // (kernel name, GPU ms) for each dispatch of the last run; empty unless profiling.
    std::vector<std::pair<std::string, double>> kernel_times() const;

private:
    VkDescriptorSet allocate_set(const Kernel& k);
    void cut();  // ends the current command buffer and begins the next
    Context& m_ctx;
    Handle<VkCommandPool> m_pool;
    VkCommandBuffer m_cb = VK_NULL_HANDLE;  // the one being recorded
    std::vector<VkCommandBuffer> m_cbs;     // every segment, in submission order (freed with the pool)
    size_t m_used = 0;                      // segments recorded so far
    double m_budget = 0, m_seg_cost = 0;
    std::vector<Handle<VkDescriptorPool>> m_desc_pools;
    std::vector<Handle<VkBufferView>> m_views;  // texel views made while recording, alive as long as the commands
    uint32_t m_sets_in_pool = 0;
    Handle<VkFence> m_fence;
    Handle<VkQueryPool> m_queries;
    bool m_recorded = false;
    size_t m_dispatches = 0;
    size_t m_pieces = 0;
    bool m_profile = false;
    static constexpr std::chrono::milliseconds k_time_every{200};
    bool m_timed = false;  // m_timed_ms measured (at m_timed_at)
    bool m_timed_now = false;
    double m_timed_ms = 0;
    std::chrono::steady_clock::time_point m_timed_at;
    std::vector<std::string> m_names;
    std::vector<uint64_t> m_stamps;
};

}  // namespace attn
