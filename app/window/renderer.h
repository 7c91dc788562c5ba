// Renderer: the window's swapchain, render pass and Dear ImGui Vulkan backend on the window's device (training has
// another, window_app.cpp), plus readback.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <imgui_impl_vulkan.h>

#include "vk/buffer.h"
#include "vk/context.h"
#include "present_x11.h"

struct GLFWwindow;

namespace attn {

// An RGBA8 copy of the window.
struct Image {
    int width = 0, height = 0;
    std::vector<uint8_t> rgba;
};

// The X11 shared-memory presenter when frames should take that path (a CPU Vulkan driver on X11, or
// ATTN_PRESENT=x11-shm), else nullptr (the swapchain; ATTN_PRESENT=swapchain forces it). Throws on a bad ATTN_PRESENT.
std::unique_ptr<X11ShmPresenter> choose_x11_shm(const Context& ctx, GLFWwindow* window);

// An opaque, axis-aligned rectangle that the renderer fills with a clear (vkCmdClearAttachments) where ImGui would
// draw two textured, blended triangles: on a CPU driver that costs a fraction as much per pixel, which counts for
// large areas redrawn every frame (the loss plot's background). Pixels whose centres lie in [a, b), as AddRectFilled;
// a colour that is not opaque falls back to AddRectFilled.
void add_opaque_fill(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 colour);

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
    // Uploads ImGui's font atlas again after it was rebuilt (another corpus, other characters); between frames.
    void rebuild_fonts();
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
    void submit_and_wait(Frame& f);  // f.cb with f.fence (reset), the queue's lock held only to submit
    void check_partial(ImDrawData* dd, Frame& f);  // ATTN_CHECK_REDRAW: the partial frame against a full one
    bool create_targets();    // false while the window has no area
    void create_swapchain(VkExtent2D ext, const VkSurfaceCapabilitiesKHR& caps);
    void create_offscreen(VkExtent2D ext);  // the X11 shared-memory path's one image
    void destroy_swapchain_images();
    void wait_queue_idle();
    void start_imgui();  // ImGui's Vulkan backend with m_imgui_info, and the font texture

    Context& m_ctx;
    GLFWwindow* m_window;
    VkSurfaceFormatKHR m_format{};
    VkExtent2D m_extent{};
    VkPresentModeKHR m_present_mode = VK_PRESENT_MODE_FIFO_KHR;
    // With a CPU driver on X11: frames are rendered into m_offscreen, copied to m_readback and put into the window
    // by m_shm, so the queue (the window's device, which the Lab's demos share) is held only to submit (see
    // present_x11.h).
    std::unique_ptr<X11ShmPresenter> m_shm;
    VkImageLayout m_final_layout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    Handle<VkDeviceMemory> m_offscreen_memory;
    Handle<VkImage> m_offscreen;
    // Partial redraw (X11 SHM path only: its one image keeps the last frame): the draw lists whose vertices,
    // indices or commands changed are drawn again over their cleared rectangles, and every other list clipped to
    // those rectangles; the rest of the frame is kept. m_prev: last frame's lists, invalid after a resize.
    struct ListKey {
        std::string owner;
        uint64_t hash;
        VkRect2D rect;  // union of the list's clip rectangles, in pixels
    };
    std::vector<ListKey> m_prev;
    bool m_prev_valid = false;
    bool m_partial_redraw = false;  // ATTN_FULL_REDRAW=1 turns it off
    // the last time the whole frame went to the X server (partial frames send only what changed)
    std::chrono::steady_clock::time_point m_full_presented{};
    static constexpr std::chrono::milliseconds k_full_present{250};
    bool m_check_redraw = false;  // ATTN_CHECK_REDRAW=1: each partial frame compared with a full redraw (tests)
    uint64_t m_partial_frames = 0, m_partial_mismatches = 0;
    double m_cleared_share = 0;  // sum over checked frames of the cleared share of the frame (rectangles may overlap)
    Handle<VkRenderPass> m_render_pass_load;  // LOAD instead of CLEAR: compatible with m_render_pass
    struct DrawItem {
        int list;       // index in the frame's ImDrawData
        bool clipped;   // drawn only inside `clip` (an unchanged list under a cleared rectangle), else whole
        VkRect2D clip;  // pixels
    };
    // What of `dd` to draw, in order, and which rectangles to clear first; false: the whole frame from a clear.
    bool plan_redraw(const ImDrawData* dd, std::vector<DrawItem>& draw, std::vector<VkClearRect>& clear);
    void record_frame(VkCommandBuffer cb, ImDrawData* dd, const std::vector<DrawItem>* draw,
                      const std::vector<VkClearRect>* clear, bool copy_out, uint32_t index);
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
    ImGui_ImplVulkan_InitInfo m_imgui_info{};
};

}  // namespace attn
