// Move-only RAII owner for one Vulkan handle: destroys itself, never copied.
#pragma once
#include <functional>
#include <utility>
#include <vulkan/vulkan.h>

namespace attn {

template <typename T>
class Handle {
public:
    using Deleter = std::function<void(T)>;
    Handle() = default;
    Handle(T h, Deleter d) : m_h(h), m_del(std::move(d)) {}
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    Handle(Handle&& o) noexcept : m_h(std::exchange(o.m_h, VK_NULL_HANDLE)), m_del(std::move(o.m_del)) {}
    Handle& operator=(Handle&& o) noexcept {
        if (this != &o) {
            reset();
            m_h = std::exchange(o.m_h, VK_NULL_HANDLE);
            m_del = std::move(o.m_del);
        }
        return *this;
    }
    ~Handle() { reset(); }
    void reset() {
        if (m_h != VK_NULL_HANDLE && m_del) m_del(m_h);
        m_h = VK_NULL_HANDLE;
    }
    T get() const { return m_h; }
    operator T() const { return m_h; }
    explicit operator bool() const { return m_h != VK_NULL_HANDLE; }

private:
    T m_h = VK_NULL_HANDLE;
    Deleter m_del;
};

}  // namespace attn
