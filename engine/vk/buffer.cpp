// RAII storage buffer: allocation, mapping, staged upload and download.
#include "vk/buffer.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <sys/mman.h>

namespace attn {

Buffer::Buffer(Context& ctx, size_t bytes, bool host_visible) : m_ctx(&ctx), m_bytes(bytes) {
    if (bytes == 0) bytes = 4;  // Vulkan forbids empty buffers; keep m_bytes honest
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = bytes;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
               VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VK_CHECK(vkCreateBuffer(ctx.device(), &bi, nullptr, &m_buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(ctx.device(), m_buffer, &req);
    uint32_t type = UINT32_MAX;
    if (host_visible) {
        type = ctx.find_memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                            VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                                                            VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
        if (type == UINT32_MAX)
            type = ctx.find_memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    } else {
        type = ctx.find_memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        if (type == UINT32_MAX) type = ctx.find_memory_type(req.memoryTypeBits, 0);
    }
    if (type == UINT32_MAX) throw Error("no suitable Vulkan memory type for a buffer; the driver looks broken");
    const VkMemoryPropertyFlags direct =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    m_host_access = !host_visible && ctx.policy().direct_copies && (ctx.memory_type_flags(type) & direct) == direct;
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    VkResult r = vkAllocateMemory(ctx.device(), &ai, nullptr, &m_memory);
    if (r != VK_SUCCESS) {
        vkDestroyBuffer(ctx.device(), m_buffer, nullptr);
        m_buffer = VK_NULL_HANDLE;
        if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
            throw DeviceError(std::string(r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? "the GPU is" : "the computer is") +
                                  " out of memory allocating " + std::to_string(bytes >> 20) +
                                  " MiB: use a smaller batch size, block size or model",
                              r);
        VK_CHECK(r);
    }
    VK_CHECK(vkBindBufferMemory(ctx.device(), m_buffer, m_memory, 0));
    m_alloc_bytes = req.size;
    ctx.track_allocation(int64_t(m_alloc_bytes));
    if (host_visible) VK_CHECK(vkMapMemory(ctx.device(), m_memory, 0, VK_WHOLE_SIZE, 0, &m_mapped));
    // A CPU driver's device memory is this process's memory: a big buffer asks for 2 MiB pages, so that its first
    // touch (an upload, a fill, the first kernel to write it) takes one page fault per 2 MiB instead of 512. A hint;
    // where transparent huge pages are off it changes nothing.
    if (m_host_access && ctx.policy().cpu_device && bytes >= k_huge_pages_from) {
        const uintptr_t huge = uintptr_t(2) << 20, p = reinterpret_cast<uintptr_t>(host_view());
        uintptr_t from = (p + huge - 1) & ~(huge - 1), to = (p + bytes) & ~(huge - 1);
        if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
    }
}

Buffer::Buffer(Buffer&& o) noexcept { *this = std::move(o); }

Buffer& Buffer::operator=(Buffer&& o) noexcept {
    if (this != &o) {
        release();
        m_ctx = o.m_ctx;
        m_buffer = std::exchange(o.m_buffer, VK_NULL_HANDLE);
        m_memory = std::exchange(o.m_memory, VK_NULL_HANDLE);
        m_bytes = std::exchange(o.m_bytes, 0);
        m_mapped = std::exchange(o.m_mapped, nullptr);
        m_alloc_bytes = std::exchange(o.m_alloc_bytes, 0);
        m_host_access = std::exchange(o.m_host_access, false);
        m_host = std::exchange(o.m_host, nullptr);
    }
    return *this;
}

Buffer::~Buffer() { release(); }

void Buffer::release() {
    if (!m_ctx) return;
    if (m_buffer) vkDestroyBuffer(m_ctx->device(), m_buffer, nullptr);
    if (m_memory) {
        vkFreeMemory(m_ctx->device(), m_memory, nullptr);
        m_ctx->track_allocation(-int64_t(m_alloc_bytes));
    }
    m_alloc_bytes = 0;
    m_buffer = VK_NULL_HANDLE;
    m_memory = VK_NULL_HANDLE;
    m_mapped = nullptr;
    m_host = nullptr;
    m_host_access = false;
}

void* Buffer::host_view() const {
    if (!m_host) VK_CHECK(vkMapMemory(m_ctx->device(), m_memory, 0, VK_WHOLE_SIZE, 0, &m_host));
    return m_host;
}

void Buffer::upload(const void* src, size_t bytes, size_t offset) {
    if (bytes == 0) return;
    if (m_mapped) {
        std::memcpy(static_cast<char*>(m_mapped) + offset, src, bytes);
        return;
    }
    if (m_host_access) {  // nothing on the queue may be using it while the host writes
        std::lock_guard lock(m_ctx->queue_mutex());
        VK_CHECK(vkQueueWaitIdle(m_ctx->queue()));
        std::memcpy(static_cast<char*>(host_view()) + offset, src, bytes);
        return;
    }
    const size_t most = size_t(std::max<uint64_t>(m_ctx->policy().staging_bytes, 4));
    Buffer staging(*m_ctx, std::min(bytes, most), true);
    for (size_t done = 0; done < bytes;) {
        size_t n = std::min(bytes - done, most);
        std::memcpy(staging.mapped(), static_cast<const char*>(src) + done, n);
        m_ctx->run_once([&](VkCommandBuffer cb) {
            VkBufferCopy c{0, offset + done, n};
            vkCmdCopyBuffer(cb, staging.get(), m_buffer, 1, &c);
        });
        done += n;
    }
}

void Buffer::download(void* dst, size_t bytes, size_t offset) const {
    if (bytes == 0) return;
    if (m_mapped) {
        std::memcpy(dst, static_cast<const char*>(m_mapped) + offset, bytes);
        return;
    }
    if (m_host_access) {  // once the work writing it is done
        std::lock_guard lock(m_ctx->queue_mutex());
        VK_CHECK(vkQueueWaitIdle(m_ctx->queue()));
        std::memcpy(dst, static_cast<const char*>(host_view()) + offset, bytes);
        return;
    }
    const size_t most = size_t(std::max<uint64_t>(m_ctx->policy().staging_bytes, 4));
    Buffer staging(*m_ctx, std::min(bytes, most), true);
    for (size_t done = 0; done < bytes;) {
        size_t n = std::min(bytes - done, most);
        m_ctx->run_once([&](VkCommandBuffer cb) {
            VkBufferCopy c{offset + done, 0, n};
            vkCmdCopyBuffer(cb, m_buffer, staging.get(), 1, &c);
        });
        std::memcpy(static_cast<char*>(dst) + done, staging.mapped(), n);
        done += n;
    }
}

void Buffer::fill_zero() {
    if (m_mapped) {
        std::memset(m_mapped, 0, m_bytes);
        return;
    }
    m_ctx->run_once([&](VkCommandBuffer cb) { vkCmdFillBuffer(cb, m_buffer, 0, VK_WHOLE_SIZE, 0); });
}

}  // namespace attn
