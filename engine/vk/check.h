// VK_CHECK and the error type every set-up failure throws: it says what to do next.
#pragma once
#include <stdexcept>
#include <string>
#include <vulkan/vulkan.h>

namespace attn {

// An error meant for the user: main() prints what() on one line and exits non-zero.
struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Thrown when the GPU runs out of memory or is lost mid-run.
struct DeviceError : Error {
    VkResult result;
    DeviceError(const std::string& what, VkResult r) : Error(what), result(r) {}
};

const char* vk_result_name(VkResult r);
[[noreturn]] void vk_fail(VkResult r, const char* expr, const char* file, int line);

}  // namespace attn

#define VK_CHECK(expr)                                                        \
    do {                                                                      \
        VkResult vk_check_result_ = (expr);                                   \
        if (vk_check_result_ != VK_SUCCESS)                                   \
            ::attn::vk_fail(vk_check_result_, #expr, __FILE__, __LINE__);     \
    } while (0)
