// RAII storage buffer in device memory, with upload/download straight into it where the host can map it cached,
// else through a staging buffer (KernelPolicy::staging_bytes at a time).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "vk/context.h"

namespace attn {

class Buffer {
public:
    Buffer() = default;
    // host_visible: CPU-mapped (for small per-step uploads and readbacks).
    Buffer(Context& ctx, size_t bytes, bool host_visible = false);
    Buffer(Buffer&&) noexcept;
    Buffer& operator=(Buffer&&) noexcept;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer();

    VkBuffer get() const { return m_buffer; }
    size_t bytes() const { return m_bytes; }
    void* mapped() const { return m_mapped; }
    explicit operator bool() const { return m_buffer != VK_NULL_HANDLE; }

    void upload(const void* src, size_t bytes, size_t offset = 0);
    void download(void* dst, size_t bytes, size_t offset = 0) const;
    void fill_zero();

    template <typename T> void upload(const std::vector<T>& v, size_t offset = 0) { upload(v.data(), v.size() * sizeof(T), offset); }
    template <typename T> std::vector<T> read(size_t count, size_t offset_elems = 0) const {
        std::vector<T> v(count);
        download(v.data(), count * sizeof(T), offset_elems * sizeof(T));
        return v;
    }

private:
    void release();
    Context* m_ctx = nullptr;
    VkBuffer m_buffer = VK_NULL_HANDLE;
    VkDeviceMemory m_memory = VK_NULL_HANDLE;
    size_t m_bytes = 0;
    void* m_mapped = nullptr;
    size_t m_alloc_bytes = 0;  // what the allocation really took (>= m_bytes)
    // Device memory the host can also map, coherent and cached (a CPU driver, an integrated GPU): upload and
    // download copy straight into it once the queue is idle, instead of through a staging buffer.
    bool m_host_access = false;
    static constexpr size_t k_huge_pages_from = size_t(32) << 20;  // a CPU driver's buffer this big: 2 MiB pages
    mutable void* m_host = nullptr;  // its mapping, made on first use
    void* host_view() const;
};

// A view of part of a buffer, bound to one descriptor slot.
struct BufferRange {
    const Buffer* buffer = nullptr;
    size_t offset = 0;  // bytes
    size_t bytes = 0;   // 0: to the end
    BufferRange() = default;
    BufferRange(const Buffer& b) : buffer(&b) {}
    BufferRange(const Buffer& b, size_t off, size_t n) : buffer(&b), offset(off), bytes(n) {}
    size_t size() const { return !buffer ? 0 : bytes ? bytes : buffer->bytes() - offset; }  // bytes in range
};

}  // namespace attn
