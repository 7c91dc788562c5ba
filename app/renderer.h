// Renderer: the window's swapchain, render pass and Dear ImGui Vulkan backend on the engine's device, plus readback.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "vk/buffer.h"
#include "vk/context.h"
#include "present_x11.h"

struct GLFWwindow;
struct ImDrawData;

namespace attn {

// An RGBA8 copy of the window.
struct Image {
    int width = 0, height = 0;
    std::vector<uint8_t> rgba;
};

// The X11 shared-memory presenter when frames should take that path (a CPU Vulkan driver on X11, or
// ATTN_PRESENT=x11-shm), else nullptr (the swapchain; ATTN_PRESENT=swapchain forces it). Throws on a bad ATTN_PRESENT.
std::unique_ptr<X11ShmPresenter> choose_x11_shm(const Context& ctx, GLFWwindow* window);

class Renderer {
public:
    // With `shm`, frames go to the window through it; without, through a swapchain on ctx's surface.
    Renderer(Context& ctx, GLFWwindow* window, std::unique_ptr<X11ShmPresenter> shm);
    ~Renderer();
    Renderer(const Renderer&) = delete;
    Renderer& operator=(const Renderer&) = delete;

    // Draws ImGui's draw data and presents. With `grab`, also copies the rendered image into it.
    // Returns false when the frame was skipped (swapchain out of date, window minimised).
    bool render(ImDrawData* draw_data, Image* grab);
    bool can_grab() const { return m_can_grab; }
    int width() const { return int(m_extent.width); }
    int height() const { return int(m_extent.height); }
    // How frames reach the window: "swapchain", or "X11 shared memory" (a CPU Vulkan driver on X11).
    const char* present_path() const { return m_shm ? "X11 shared memory" : "swapchain"; }

private:
    static constexpr int k_frames = 2;  // frames in flight
    struct Frame {
        Handle<VkCommandPool> pool;
        VkCommandBuffer cb = VK_NULL_HANDLE;
        Handle<VkFence> fence;
        Handle<VkSemaphore> acquired;
    };
    bool create_targets();    // false while the window has no area
    void create_swapchain(VkExtent2D ext, const VkSurfaceCapabilitiesKHR& caps);
    void create_offscreen(VkExtent2D ext);  // the X11 shared-memory path's one image
    void destroy_swapchain_images();
    void wait_queue_idle();

    Context& m_ctx;
    GLFWwindow* m_window;
    VkSurfaceFormatKHR m_format{};
    VkExtent2D m_extent{};
    VkPresentModeKHR m_present_mode = VK_PRESENT_MODE_FIFO_KHR;
    // With a CPU driver on X11: frames are rendered into m_offscreen, copied to m_readback and put into the window
    // by m_shm, so the queue that training shares is held only to submit (see present_x11.h).
    std::unique_ptr<X11ShmPresenter> m_shm;
    VkImageLayout m_final_layout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    Handle<VkDeviceMemory> m_offscreen_memory;
    Handle<VkImage> m_offscreen;
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
