// Renderer: the window's swapchain, render pass and Dear ImGui Vulkan backend on the engine's device, plus readback.
#pragma once
#include <cstdint>
#include <vector>

#include "vk/buffer.h"
#include "vk/context.h"

struct GLFWwindow;
struct ImDrawData;

namespace attn {

// An RGBA8 copy of the window.
struct Image {
    int width = 0, height = 0;
    std::vector<uint8_t> rgba;
};

class Renderer {
public:
    Renderer(Context& ctx, GLFWwindow* window);
    ~Renderer();
    Renderer(const Renderer&) = delete;
    Renderer& operator=(const Renderer&) = delete;

    // Draws ImGui's draw data and presents. With `grab`, also copies the rendered image into it.
    // Returns false when the frame was skipped (swapchain out of date, window minimised).
    bool render(ImDrawData* draw_data, Image* grab);
    bool can_grab() const { return m_can_grab; }
    int width() const { return int(m_extent.width); }
    int height() const { return int(m_extent.height); }

private:
    static constexpr int k_frames = 2;  // frames in flight
    struct Frame {
        Handle<VkCommandPool> pool;
        VkCommandBuffer cb = VK_NULL_HANDLE;
        Handle<VkFence> fence;
        Handle<VkSemaphore> acquired;
    };
    bool create_swapchain();  // false while the window has no area
    void destroy_swapchain_images();
    void wait_queue_idle();

    Context& m_ctx;
    GLFWwindow* m_window;
    VkSurfaceFormatKHR m_format{};
    VkExtent2D m_extent{};
    VkPresentModeKHR m_present_mode = VK_PRESENT_MODE_FIFO_KHR;
    bool m_can_grab = false;
    bool m_need_recreate = false;
    Handle<VkRenderPass> m_render_pass;
    Handle<VkDescriptorPool> m_imgui_pool;
    Handle<VkSwapchainKHR> m_swapchain;
    std::vector<VkImage> m_images;
    std::vector<Handle<VkImageView>> m_views;
    std::vector<Handle<VkFramebuffer>> m_framebuffers;
    std::vector<Handle<VkSemaphore>> m_rendered;  // per swapchain image
    Frame m_frames[k_frames];
    int m_frame = 0;
    Buffer m_readback;
    bool m_imgui_ready = false;
};

}  // namespace attn
