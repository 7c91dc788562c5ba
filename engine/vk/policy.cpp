// KernelPolicy::for_device: the device's facts and the one parser of the ATTNLAB_* overrides.
#include "vk/policy.h"

#include <algorithm>
#include <cstdlib>

#include "vk/check.h"

namespace attn {

namespace {

// The value of ATTNLAB_<name>, or "" when unset or empty.
std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

[[noreturn]] void bad(const char* var, const std::string& value, const char* want) {
    throw Error(std::string(var) + "='" + value + "' is not " + want + " (or unset it)");
}

int int_in(const char* var, const std::string& v, int lo, int hi, const char* want) {
    char* end = nullptr;
    long n = std::strtol(v.c_str(), &end, 10);
    if (end == v.c_str() || *end != '\0' || n < lo || n > hi) bad(var, v, want);
    return int(n);
}

}  // namespace

KernelPolicy KernelPolicy::for_device(const VkPhysicalDeviceProperties& props) {
    KernelPolicy p;
    p.cpu_device = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    const auto& l = props.limits;
    p.max_invocations = l.maxComputeWorkGroupInvocations;
    p.max_shared_bytes = l.maxComputeSharedMemorySize;
    p.max_storage_range = l.maxStorageBufferRange;
    p.binding_align = std::max<uint64_t>({16, l.minStorageBufferOffsetAlignment, l.minTexelBufferOffsetAlignment});
    // gemm_smem.glsl: local_size_x 256, As + Bs 16 KiB (ops/smem.h's SMEM_INVOCATIONS, SMEM_BYTES)
    p.smem_fits = l.maxComputeWorkGroupInvocations >= 256 && l.maxComputeWorkGroupSize[0] >= 256 &&
                  l.maxComputeSharedMemorySize >= 16384;

    if (std::string v = env("ATTNLAB_ATTENTION"); !v.empty()) {
        if (v == "block") p.attention = AttentionChoice::block;
        else if (v == "rows") p.attention = AttentionChoice::rows;
        else if (v == "smem") p.attention = AttentionChoice::smem;
        else bad("ATTNLAB_ATTENTION", v, "an attention kernel: use rows, block or smem");
    }
    if (std::string v = env("ATTNLAB_ATTENTION_ROWS"); !v.empty())
        p.attention_rows = int_in("ATTNLAB_ATTENTION_ROWS", v, 1, 8, "1 to 8");
    if (std::string v = env("ATTNLAB_ATTENTION_ATT4"); !v.empty())
        p.attention_att4 = int_in("ATTNLAB_ATTENTION_ATT4", v, 0, 1, "0 or 1") == 1;
    if (std::string v = env("ATTNLAB_MATMUL"); !v.empty()) {
        if (v == "tiled") p.matmul = MatmulChoice::tiled;
        else if (v == "smem") p.matmul = MatmulChoice::smem;
        else bad("ATTNLAB_MATMUL", v, "a matmul kernel: use tiled or smem");
    }
    if (std::string v = env("ATTNLAB_LAYERNORM_ROWS"); !v.empty()) {
        if (v != "memory" && v != "registers") bad("ATTNLAB_LAYERNORM_ROWS", v, "memory or registers");
        p.layernorm_rows_in_registers = v == "registers";
    }
    if (std::string v = env("ATTNLAB_ROW_SPLITS"); !v.empty())
        p.row_splits = int_in("ATTNLAB_ROW_SPLITS", v, 1, 1 << 20, "a number of row ranges, 1 or more");
    if (std::string v = env("ATTNLAB_KERNEL_FLAGS"); !v.empty()) {
        if (v != "all" && v != "needed") bad("ATTNLAB_KERNEL_FLAGS", v, "all or needed");
        p.all_kernel_flags = v == "all";
    }
    if (std::string v = env("ATTNLAB_MAX_BINDING_KIB"); !v.empty()) {
        uint64_t kib = uint64_t(int_in("ATTNLAB_MAX_BINDING_KIB", v, 64, 1 << 22, "a size in KiB, 64 or more"));
        p.max_storage_range = std::min<uint64_t>(p.max_storage_range, kib << 10);
    }
    if (std::string v = env("ATTNLAB_NARROW_TAIL"); !v.empty())
        p.narrow_tail = int_in("ATTNLAB_NARROW_TAIL", v, 0, 1, "0 or 1") == 1;
    p.check();
    return p;
}

void KernelPolicy::check() const {
    bool smem = attention == AttentionChoice::smem || matmul == MatmulChoice::smem;
    if (smem && !smem_fits) {
        const char* var = matmul == MatmulChoice::smem ? "ATTNLAB_MATMUL" : "ATTNLAB_ATTENTION";
        throw Error(std::string(var) + "=smem: this device allows " + std::to_string(max_invocations) +
                    " invocations and " + std::to_string(max_shared_bytes) +
                    " bytes of shared memory per workgroup, the shared-memory kernels need 256 and 16384: unset " + var);
    }
    if (attention_rows < 0 || attention_rows > 8)
        throw Error("ATTNLAB_ATTENTION_ROWS='" + std::to_string(attention_rows) + "' is not 1 to 8 (or unset it)");
    if (row_splits < 0) throw Error("ATTNLAB_ROW_SPLITS must be 1 or more (or unset it)");
}

void steer_cpu_driver_threads(int cpu_threads) {
    if (cpu_threads > 0) setenv("LP_NUM_THREADS", std::to_string(cpu_threads == 1 ? 0 : cpu_threads).c_str(), 1);
}

bool cpu_driver_threads_set_by_user() {
    const char* e = std::getenv("LP_NUM_THREADS");
    return e && *e;
}

bool cpu_driver_single_thread() {
    const char* e = std::getenv("LP_NUM_THREADS");
    return e && std::string(e) == "0";
}

}  // namespace attn
