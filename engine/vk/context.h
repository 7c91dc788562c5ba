// Vulkan context: instance, device choice, one queue (shared behind a mutex), memory helpers.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "vk/check.h"
#include "vk/handle.h"
#include "vk/policy.h"

namespace attn {

class Context;

struct ContextOptions {
    int device_index = -1;       // -1: best (discrete, then integrated, then CPU)
    bool validation = false;     // Khronos validation layer, messages to stderr
    bool quiet = false;          // do not print the chosen device
    // CPU drivers: how many threads run each dispatch. 0: LP_NUM_THREADS as it is (unset: the driver's default, for
    // lavapipe one per core, a thread pool woken for every dispatch); 1: the submitting thread alone; N: N. Sets
    // LP_NUM_THREADS (lavapipe's, process-wide, read when an instance finds its devices); other drivers ignore it.
    int cpu_threads = 0;
    std::vector<const char*> instance_extensions;  // e.g. what GLFW needs for a surface
    std::vector<const char*> device_extensions;    // e.g. VK_KHR_swapchain
    // For a window: called after the instance exists to make a surface; the queue family picked
    // must then be able to present to it.
    std::function<VkSurfaceKHR(VkInstance)> make_surface;
    // A peer (Context::peer_options) counts its validation messages into its primary's count.
    Context* report_to = nullptr;
    // A peer takes its primary's kernel policy (overrides a test set included); others read the environment.
    const KernelPolicy* policy = nullptr;
};

struct DeviceInfo {
    std::string name;
    VkPhysicalDeviceType type;
    uint64_t memory_bytes;
};

class Context {
public:
    explicit Context(const ContextOptions& opt = {});
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    VkInstance instance() const { return m_instance; }
    VkPhysicalDevice physical() const { return m_physical; }
    VkDevice device() const { return m_device; }
    VkQueue queue() const { return m_queue; }
    uint32_t queue_family() const { return m_family; }
    VkSurfaceKHR surface() const { return m_surface; }
    const VkPhysicalDeviceProperties& props() const { return m_props; }
    const std::string& device_name() const { return m_name; }
    uint64_t device_memory_bytes() const { return m_memory_bytes; }
    // Which kernel variants the ops record on this device (vk/policy.h).
    const KernelPolicy& policy() const { return m_policy; }
    // Tests and benchmarks: force variants from now on (programs recorded before keep theirs; a test that forces
    // smem checks smem_fits first, as KernelPolicy::check does for the environment's overrides).
    KernelPolicy& edit_policy() { return m_policy; }
    // lavapipe and similar have one queue: every submit from any thread takes this lock.
    std::mutex& queue_mutex() { return m_queue_mutex; }
    // Number of validation-layer warnings and errors seen so far (tests assert it stays 0).
    uint64_t validation_messages() const { return m_validation_messages.load(); }
    bool validation_enabled() const { return m_validation; }

    uint32_t find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags want) const;
    VkMemoryPropertyFlags memory_type_flags(uint32_t type) const { return m_mem.memoryTypes[type].propertyFlags; }
    // Runs `record` in a one-shot command buffer and waits for it.
    void run_once(const std::function<void(VkCommandBuffer)>& record);

    static std::vector<DeviceInfo> list_devices();

    // Options for another device on the same physical device (Trainer's replicas: data parallelism on a CPU driver,
    // one device per core): quiet, the same validation and kernel policy, messages counted here, LP_NUM_THREADS as it
    // is.
    ContextOptions peer_options();
    // On a CPU driver: whether this context's dispatches run on the submitting thread alone (LP_NUM_THREADS=0 when
    // it was created), as Trainer's replicas need. False on GPUs.
    bool cpu_single_thread() const { return m_policy.cpu_single_thread; }
    // On a CPU driver: the invocations one pass of its vector code runs (its subgroup size: lavapipe's 8 lanes at 256
    // bits), by which Program::dispatch sizes the workgroups of a dispatch's last, partial one; 0 on GPUs.
    uint32_t cpu_simd_width() const { return m_cpu_simd; }

    // Device memory currently allocated through Buffer (bytes): what the app reports as "GPU memory in use".
    uint64_t allocated_bytes() const { return m_allocated.load(); }
    void track_allocation(int64_t delta) { m_allocated += uint64_t(delta); }

    void count_validation_message() {
        m_validation_messages++;
        if (m_report_to) m_report_to->count_validation_message();
    }
    std::atomic<uint64_t> m_validation_messages{0};

private:
    VkInstance m_instance = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT m_messenger = VK_NULL_HANDLE;
    VkSurfaceKHR m_surface = VK_NULL_HANDLE;
    VkPhysicalDevice m_physical = VK_NULL_HANDLE;
    VkDevice m_device = VK_NULL_HANDLE;
    VkQueue m_queue = VK_NULL_HANDLE;
    uint32_t m_family = 0;
    int m_device_index = 0;  // in enumeration order (ContextOptions::device_index)
    uint32_t m_cpu_simd = 0;
    Context* m_report_to = nullptr;
    VkPhysicalDeviceProperties m_props{};
    KernelPolicy m_policy;
    VkPhysicalDeviceMemoryProperties m_mem{};
    std::string m_name;
    uint64_t m_memory_bytes = 0;
    bool m_validation = false;
    std::mutex m_queue_mutex;
    VkCommandPool m_once_pool = VK_NULL_HANDLE;
    std::atomic<uint64_t> m_allocated{0};
};

}  // namespace attn
