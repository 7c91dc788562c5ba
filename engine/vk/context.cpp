// Vulkan context: instance, validation messenger, device choice, queue, one-shot submits.
#include "vk/context.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace attn {

const char* vk_result_name(VkResult r) {
    switch (r) {
#define CASE(x) case x: return #x;
        CASE(VK_SUCCESS) CASE(VK_NOT_READY) CASE(VK_TIMEOUT) CASE(VK_INCOMPLETE)
        CASE(VK_ERROR_OUT_OF_HOST_MEMORY) CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        CASE(VK_ERROR_INITIALIZATION_FAILED) CASE(VK_ERROR_DEVICE_LOST)
        CASE(VK_ERROR_MEMORY_MAP_FAILED) CASE(VK_ERROR_LAYER_NOT_PRESENT)
        CASE(VK_ERROR_EXTENSION_NOT_PRESENT) CASE(VK_ERROR_FEATURE_NOT_PRESENT)
        CASE(VK_ERROR_INCOMPATIBLE_DRIVER) CASE(VK_ERROR_TOO_MANY_OBJECTS)
        CASE(VK_ERROR_FORMAT_NOT_SUPPORTED) CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
        CASE(VK_ERROR_SURFACE_LOST_KHR) CASE(VK_ERROR_OUT_OF_DATE_KHR) CASE(VK_SUBOPTIMAL_KHR)
#undef CASE
        default: return "VK_ERROR_(unknown)";
    }
}

void vk_fail(VkResult r, const char* expr, const char* file, int line) {
    // what the user can act on first; the Vulkan call after it (the source line only for the unexpected ones: a bug)
    std::string call = std::string(vk_result_name(r)) + " in " + expr;
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
        throw DeviceError("the GPU ran out of memory (" + call + "): try a smaller batch size, block size or model", r);
    if (r == VK_ERROR_OUT_OF_HOST_MEMORY)  // the driver's own memory in RAM (all of it, on a CPU driver such as lavapipe)
        throw DeviceError("the computer ran out of memory (" + call +
                              "): close other programs, or try a smaller batch size, block size or model", r);
    if (r == VK_ERROR_DEVICE_LOST)
        throw DeviceError("the GPU device was lost (" + call + "; a driver reset or crash)", r);
    throw Error(std::string(expr) + " failed with " + vk_result_name(r) + " at " + file + ":" + std::to_string(line));
}

static VKAPI_ATTR VkBool32 VKAPI_CALL debug_callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                     void* user) {
    if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
        auto* ctx = static_cast<Context*>(user);
        ctx->count_validation_message();
        std::fprintf(stderr, "[validation] %s\n", data->pMessage);
    }
    return VK_FALSE;
}

static bool has_layer(const char* name) {
    uint32_t n = 0;
    vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> layers(n);
    vkEnumerateInstanceLayerProperties(&n, layers.data());
    for (auto& l : layers)
        if (std::strcmp(l.layerName, name) == 0) return true;
    return false;
}

static int type_rank(VkPhysicalDeviceType t) {
    switch (t) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
        default: return 4;
    }
}

static const char* type_name(VkPhysicalDeviceType t) {
    switch (t) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
        default: return "other";
    }
}

static VkInstance create_instance(bool validation, const std::vector<const char*>& extra_ext,
                                  bool* debug_utils) {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "Attention Lab";
    app.apiVersion = VK_API_VERSION_1_1;
    std::vector<const char*> ext = extra_ext;
    std::vector<const char*> layers;
    *debug_utils = false;
    if (validation) {
        if (!has_layer("VK_LAYER_KHRONOS_validation"))
            throw Error("--validation needs the Khronos validation layer: install it with "
                        "'apt-get install vulkan-validationlayers'");
        layers.push_back("VK_LAYER_KHRONOS_validation");
        ext.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
        *debug_utils = true;
    }
    VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ci.pApplicationInfo = &app;
    ci.enabledExtensionCount = uint32_t(ext.size());
    ci.ppEnabledExtensionNames = ext.data();
    ci.enabledLayerCount = uint32_t(layers.size());
    ci.ppEnabledLayerNames = layers.data();
    VkInstance inst = VK_NULL_HANDLE;
    VkResult r = vkCreateInstance(&ci, nullptr, &inst);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED)
        throw Error("no Vulkan driver found: install one with 'apt-get install mesa-vulkan-drivers' "
                    "(the CPU driver, lavapipe) or your GPU's Vulkan driver");
    VK_CHECK(r);
    return inst;
}

static std::vector<VkPhysicalDevice> enumerate(VkInstance inst) {
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(inst, &n, nullptr);
    std::vector<VkPhysicalDevice> devs(n);
    if (n) vkEnumeratePhysicalDevices(inst, &n, devs.data());
    return devs;
}

static uint64_t device_local_bytes(VkPhysicalDevice pd) {
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    uint64_t best = 0;
    for (uint32_t i = 0; i < mp.memoryHeapCount; i++)
        if (mp.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) best = std::max<uint64_t>(best, mp.memoryHeaps[i].size);
    return best;
}

// The memory a run can use: the largest device-local heap; a CPU driver (lavapipe) allocates from system memory
// whatever heap size it reports, so there three quarters of the RAM when that is more.
static uint64_t usable_bytes(VkPhysicalDevice pd, VkPhysicalDeviceType type) {
    uint64_t bytes = device_local_bytes(pd);
    if (type == VK_PHYSICAL_DEVICE_TYPE_CPU) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
        if (pages > 0 && page > 0) bytes = std::max<uint64_t>(bytes, uint64_t(pages) * uint64_t(page) * 3 / 4);
    }
    return bytes;
}

std::vector<DeviceInfo> Context::list_devices() {
    bool du = false;
    VkInstance inst = create_instance(false, {}, &du);
    std::vector<DeviceInfo> out;
    for (auto pd : enumerate(inst)) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(pd, &p);
        out.push_back({p.deviceName, p.deviceType, usable_bytes(pd, p.deviceType)});
    }
    vkDestroyInstance(inst, nullptr);
    return out;
}

Context::Context(const ContextOptions& opt) {
    steer_cpu_driver_threads(opt.cpu_threads);  // before the instance finds its devices (vk/policy.h)
    bool debug_utils = false;
    m_validation = opt.validation;
    m_report_to = opt.report_to;
    m_instance = create_instance(opt.validation, opt.instance_extensions, &debug_utils);
    if (debug_utils) {
        VkDebugUtilsMessengerCreateInfoEXT mi{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
        mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
        mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
        mi.pfnUserCallback = debug_callback;
        mi.pUserData = this;
        auto create = (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(m_instance, "vkCreateDebugUtilsMessengerEXT");
        if (create) VK_CHECK(create(m_instance, &mi, nullptr, &m_messenger));
    }
    if (opt.make_surface) m_surface = opt.make_surface(m_instance);

    auto devs = enumerate(m_instance);
    if (devs.empty())
        throw Error("Vulkan found no device: install 'mesa-vulkan-drivers' (lavapipe, the CPU driver) or a GPU driver");
    // Each candidate needs a queue family with compute (and, for a window, graphics + present).
    auto pick_family = [&](VkPhysicalDevice pd, uint32_t* family) {
        uint32_t n = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
        std::vector<VkQueueFamilyProperties> fams(n);
        vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fams.data());
        for (uint32_t i = 0; i < n; i++) {
            VkQueueFlags need = VK_QUEUE_COMPUTE_BIT | (m_surface ? VK_QUEUE_GRAPHICS_BIT : 0);
            if ((fams[i].queueFlags & need) != need) continue;
            if (m_surface) {
                VkBool32 ok = VK_FALSE;
                vkGetPhysicalDeviceSurfaceSupportKHR(pd, i, m_surface, &ok);
                if (!ok) continue;
            }
            *family = i;
            return true;
        }
        return false;
    };
    if (opt.device_index >= 0) {
        if (opt.device_index >= int(devs.size()))
            throw Error("--device " + std::to_string(opt.device_index) + " does not exist: this machine has " +
                        std::to_string(devs.size()) + " Vulkan device(s), numbered from 0 (see --list-devices)");
        m_physical = devs[opt.device_index];
        m_device_index = opt.device_index;
        if (!pick_family(m_physical, &m_family))
            throw Error("device " + std::to_string(opt.device_index) + " has no suitable compute queue; pick another with --device");
    } else {
        int best_rank = 99;
        for (int i = 0; i < int(devs.size()); i++) {
            VkPhysicalDevice pd = devs[i];
            VkPhysicalDeviceProperties p;
            vkGetPhysicalDeviceProperties(pd, &p);
            uint32_t fam;
            if (!pick_family(pd, &fam)) continue;
            if (type_rank(p.deviceType) < best_rank) {
                best_rank = type_rank(p.deviceType);
                m_physical = pd;
                m_family = fam;
                m_device_index = i;
            }
        }
        if (!m_physical) throw Error("no Vulkan device has a compute queue: install a working Vulkan driver");
    }
    vkGetPhysicalDeviceProperties(m_physical, &m_props);
    vkGetPhysicalDeviceMemoryProperties(m_physical, &m_mem);
    m_name = m_props.deviceName;
    m_policy = opt.policy ? *opt.policy : KernelPolicy::for_device(m_props);
    m_policy.cpu_single_thread = m_props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && cpu_driver_single_thread();
    m_memory_bytes = usable_bytes(m_physical, m_props.deviceType);
    if (m_props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) {
        VkPhysicalDeviceSubgroupProperties sg{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
        VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sg};
        vkGetPhysicalDeviceProperties2(m_physical, &p2);
        if (sg.subgroupSize > 0 && sg.subgroupSize < 64 && 64 % sg.subgroupSize == 0)  // 64: WORKGROUP (vk/program.h)
            m_cpu_simd = sg.subgroupSize;
    }
    std::string threads;  // what opt.cpu_threads set on a CPU driver
    if (m_props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && opt.cpu_threads > 0)
        threads = opt.cpu_threads == 1 ? ", every dispatch on one thread (no thread pool)"
                                       : ", " + std::to_string(opt.cpu_threads) + " threads a dispatch";
    if (!opt.quiet)
        std::fprintf(stderr, "device: %s (%s, %.1f GiB)%s\n", m_name.c_str(), type_name(m_props.deviceType),
                     m_memory_bytes / 1073741824.0, threads.c_str());

    float prio = 1.0f;
    VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qi.queueFamilyIndex = m_family;
    qi.queueCount = 1;
    qi.pQueuePriorities = &prio;
    VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &qi;
    di.enabledExtensionCount = uint32_t(opt.device_extensions.size());
    di.ppEnabledExtensionNames = opt.device_extensions.data();
    VK_CHECK(vkCreateDevice(m_physical, &di, nullptr, &m_device));
    vkGetDeviceQueue(m_device, m_family, 0, &m_queue);

    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pci.queueFamilyIndex = m_family;
    VK_CHECK(vkCreateCommandPool(m_device, &pci, nullptr, &m_once_pool));
}

ContextOptions Context::peer_options() {
    ContextOptions o;
    o.device_index = m_device_index;
    o.validation = m_validation;
    o.quiet = true;
    o.report_to = this;
    o.policy = &m_policy;
    return o;
}

Context::~Context() {
    if (m_device) {
        vkDeviceWaitIdle(m_device);
        vkDestroyCommandPool(m_device, m_once_pool, nullptr);
        vkDestroyDevice(m_device, nullptr);
    }
    if (m_surface) vkDestroySurfaceKHR(m_instance, m_surface, nullptr);
    if (m_messenger) {
        auto destroy = (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(m_instance, "vkDestroyDebugUtilsMessengerEXT");
        if (destroy) destroy(m_instance, m_messenger, nullptr);
    }
    if (m_instance) vkDestroyInstance(m_instance, nullptr);
}

uint32_t Context::find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags want) const {
    for (uint32_t i = 0; i < m_mem.memoryTypeCount; i++)
        if ((type_bits & (1u << i)) && (m_mem.memoryTypes[i].propertyFlags & want) == want) return i;
    return UINT32_MAX;
}

void Context::run_once(const std::function<void(VkCommandBuffer)>& record) {
    std::lock_guard lock(m_queue_mutex);
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = m_once_pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb;
    VK_CHECK(vkAllocateCommandBuffers(m_device, &ai, &cb));
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VK_CHECK(vkBeginCommandBuffer(cb, &bi));
    record(cb);
    VK_CHECK(vkEndCommandBuffer(cb));
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    VK_CHECK(vkCreateFence(m_device, &fi, nullptr, &fence));
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    VkResult r = vkQueueSubmit(m_queue, 1, &si, fence);
    if (r == VK_SUCCESS) r = vkWaitForFences(m_device, 1, &fence, VK_TRUE, UINT64_MAX);
    vkDestroyFence(m_device, fence, nullptr);
    vkFreeCommandBuffers(m_device, m_once_pool, 1, &cb);
    VK_CHECK(r);
}

}  // namespace attn
