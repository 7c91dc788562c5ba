// Renderer: swapchain (with TRANSFER_SRC for screenshots), one render pass, Dear ImGui's Vulkan backend, present.
// With a CPU Vulkan driver on X11 the swapchain is replaced by one offscreen image, read back and put into the
// window through shared memory (present_x11.h); ATTN_PRESENT=swapchain keeps the swapchain there too.
#include "renderer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_vulkan.h>

namespace attn {

static void imgui_check(VkResult r) {
    if (r != VK_SUCCESS) vk_fail(r, "Dear ImGui Vulkan backend", __FILE__, __LINE__);
}

std::unique_ptr<X11ShmPresenter> choose_x11_shm(const Context& ctx, GLFWwindow* window) {
    const char* env = std::getenv("ATTN_PRESENT");
    if (env && !*env) env = nullptr;
    bool want_shm = env && std::strcmp(env, "x11-shm") == 0;
    if (env && !want_shm && std::strcmp(env, "swapchain") != 0)
        throw Error(std::string("ATTN_PRESENT=") + env + " is not a present path: use swapchain or x11-shm");
    if (!want_shm && (env || ctx.props().deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU)) return nullptr;
    const char* why = "";
    auto shm = X11ShmPresenter::create(window, &why);
    int w = 0, h = 0;
    glfwGetFramebufferSize(window, &w, &h);
    if (shm && !shm->resize(std::max(w, 1), std::max(h, 1))) {
        why = "the X server refused a shared-memory image";
        shm.reset();
    }
    if (!shm && want_shm) throw Error(std::string("ATTN_PRESENT=x11-shm: ") + why);
    if (!shm) std::fprintf(stderr, "attnlab: presenting through the swapchain (%s)\n", why);
    return shm;
}

Renderer::Renderer(Context& ctx, GLFWwindow* window, std::unique_ptr<X11ShmPresenter> shm)
    : m_ctx(ctx), m_window(window), m_shm(std::move(shm)) {
    VkDevice dev = ctx.device();
    VkPhysicalDevice pd = ctx.physical();
    if (m_shm) {
        m_format = {VK_FORMAT_B8G8R8A8_UNORM, VK_COLOR_SPACE_SRGB_NONLINEAR_KHR};  // BGRX: the X visual's byte order
        m_final_layout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        m_can_grab = true;
    }
    uint32_t n = 0;
    if (!m_shm) {
    VK_CHECK(vkGetPhysicalDeviceSurfaceFormatsKHR(pd, ctx.surface(), &n, nullptr));
    std::vector<VkSurfaceFormatKHR> formats(n);
    VK_CHECK(vkGetPhysicalDeviceSurfaceFormatsKHR(pd, ctx.surface(), &n, formats.data()));
    if (formats.empty()) throw Error("the window surface offers no pixel format: check the display's Vulkan driver");
    // UNORM: ImGui's colours are meant to be written as they are, without an sRGB encode.
    m_format = formats[0];
    for (auto want : {VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_B8G8R8A8_UNORM})  // the last one found wins: BGRA first
        for (auto& f : formats)
            if (f.format == want && f.colorSpace == VK_COLOR_SPACE_SRGB_NONLINEAR_KHR) m_format = f;
    // The UI caps its own frame rate, so presenting need not wait for vblank. Mailbox or immediate also avoid a hang
    // in Mesa's software X11 path (lavapipe), where a FIFO present can block forever after the window is resized.
    uint32_t nm = 0;
    VK_CHECK(vkGetPhysicalDeviceSurfacePresentModesKHR(pd, ctx.surface(), &nm, nullptr));
    std::vector<VkPresentModeKHR> modes(nm);
    VK_CHECK(vkGetPhysicalDeviceSurfacePresentModesKHR(pd, ctx.surface(), &nm, modes.data()));
    m_present_mode = VK_PRESENT_MODE_FIFO_KHR;  // always available
    for (auto want : {VK_PRESENT_MODE_MAILBOX_KHR, VK_PRESENT_MODE_IMMEDIATE_KHR})
        if (m_present_mode == VK_PRESENT_MODE_FIFO_KHR && std::find(modes.begin(), modes.end(), want) != modes.end())
            m_present_mode = want;
    }
    VkAttachmentDescription att{};
    att.format = m_format.format;
    att.samples = VK_SAMPLE_COUNT_1_BIT;
    att.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    att.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    att.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    att.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    att.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    att.finalLayout = m_final_layout;
    VkAttachmentReference ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkSubpassDescription sub{};
    sub.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
    sub.colorAttachmentCount = 1;
    sub.pColorAttachments = &ref;
    VkSubpassDependency deps[2] = {};
    VkSubpassDependency& dep = deps[0];
    dep.srcSubpass = VK_SUBPASS_EXTERNAL;
    dep.dstSubpass = 0;
    // (TRANSFER and READ: the last frame's copy out, and its pixels loaded by a partial redraw; the same in both
    // render passes, as compatibility requires)
    dep.srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    dep.dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    dep.dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    // the frame's pixels, final layout included, before the copy into the readback buffer (screenshots, X11 SHM)
    VkSubpassDependency& out = deps[1];
    out.srcSubpass = 0;
    out.dstSubpass = VK_SUBPASS_EXTERNAL;
    out.srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    out.dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
    out.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    out.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    VkRenderPassCreateInfo rpi{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
    rpi.attachmentCount = 1;
    rpi.pAttachments = &att;
    rpi.subpassCount = 1;
    rpi.pSubpasses = &sub;
    rpi.dependencyCount = 2;
    rpi.pDependencies = deps;
    VkRenderPass rp;
    VK_CHECK(vkCreateRenderPass(dev, &rpi, nullptr, &rp));
    m_render_pass = Handle<VkRenderPass>(rp, [dev](VkRenderPass h) { vkDestroyRenderPass(dev, h, nullptr); });
    if (m_shm) {  // partial redraws keep the last frame: load it (compatible with m_render_pass: same attachment)
        att.loadOp = VK_ATTACHMENT_LOAD_OP_LOAD;
        att.initialLayout = m_final_layout;
        VK_CHECK(vkCreateRenderPass(dev, &rpi, nullptr, &rp));
        m_render_pass_load = Handle<VkRenderPass>(rp, [dev](VkRenderPass h) { vkDestroyRenderPass(dev, h, nullptr); });
        const char* check = std::getenv("ATTN_CHECK_REDRAW");
        m_check_redraw = check && std::strcmp(check, "1") == 0;
        const char* full = std::getenv("ATTN_FULL_REDRAW");  // every frame drawn whole (to compare, or if in doubt)
        m_partial_redraw = !(full && std::strcmp(full, "1") == 0);
    }

    for (auto& f : m_frames) {
        VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pci.queueFamilyIndex = ctx.queue_family();
        VkCommandPool pool;
        VK_CHECK(vkCreateCommandPool(dev, &pci, nullptr, &pool));
        f.pool = Handle<VkCommandPool>(pool, [dev](VkCommandPool h) { vkDestroyCommandPool(dev, h, nullptr); });
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = pool;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        VK_CHECK(vkAllocateCommandBuffers(dev, &ai, &f.cb));
        VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        fi.flags = VK_FENCE_CREATE_SIGNALED_BIT;
        VkFence fence;
        VK_CHECK(vkCreateFence(dev, &fi, nullptr, &fence));
        f.fence = Handle<VkFence>(fence, [dev](VkFence h) { vkDestroyFence(dev, h, nullptr); });
        VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        VkSemaphore sem;
        VK_CHECK(vkCreateSemaphore(dev, &si, nullptr, &sem));
        f.acquired = Handle<VkSemaphore>(sem, [dev](VkSemaphore h) { vkDestroySemaphore(dev, h, nullptr); });
    }

    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 16};
    VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
    dpi.maxSets = 16;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &ps;
    VkDescriptorPool dp;
    VK_CHECK(vkCreateDescriptorPool(dev, &dpi, nullptr, &dp));
    m_imgui_pool = Handle<VkDescriptorPool>(dp, [dev](VkDescriptorPool h) { vkDestroyDescriptorPool(dev, h, nullptr); });

    create_targets();

    ImGui_ImplVulkan_InitInfo& ii = m_imgui_info;
    ii.Instance = ctx.instance();
    ii.PhysicalDevice = pd;
    ii.Device = dev;
    ii.QueueFamily = ctx.queue_family();
    ii.Queue = ctx.queue();
    ii.DescriptorPool = m_imgui_pool;
    ii.MinImageCount = 2;
    ii.ImageCount = 3;  // vertex buffers rotate over this many frames: more than k_frames in flight
    ii.MSAASamples = VK_SAMPLE_COUNT_1_BIT;
    ii.CheckVkResultFn = imgui_check;
    start_imgui();
}

// Dear ImGui's Vulkan backend, and the font atlas uploaded as its texture.
void Renderer::start_imgui() {
    if (!ImGui_ImplVulkan_Init(&m_imgui_info, m_render_pass)) throw Error("Dear ImGui's Vulkan backend failed to start");
    m_imgui_ready = true;
    m_ctx.run_once([](VkCommandBuffer cb) { ImGui_ImplVulkan_CreateFontsTexture(cb); });
    ImGui_ImplVulkan_DestroyFontUploadObjects();
}

void Renderer::rebuild_fonts() {
    wait_queue_idle();  // frames in flight draw with the old font texture
    ImGui_ImplVulkan_Shutdown();  // 1.86 cannot replace the font texture alone: the backend starts anew
    m_imgui_ready = false;
    VK_CHECK(vkResetDescriptorPool(m_ctx.device(), m_imgui_pool, 0));  // the old font's descriptor set
    start_imgui();
    m_prev_valid = false;  // the last frame's pixels were drawn with the old atlas
}

Renderer::~Renderer() {
    if (m_check_redraw)
        std::printf("attnlab: partial redraws checked against full ones: %llu frames, %llu differed (%.0f%% of the "
                    "area drawn again on average)\n", (unsigned long long)m_partial_frames,
                    (unsigned long long)m_partial_mismatches, 100 * m_cleared_share / std::max<uint64_t>(m_partial_frames, 1));
    wait_queue_idle();
    if (m_imgui_ready) ImGui_ImplVulkan_Shutdown();
    destroy_swapchain_images();
    m_swapchain.reset();
}

void Renderer::wait_queue_idle() {
    std::lock_guard lk(m_ctx.queue_mutex());
    vkQueueWaitIdle(m_ctx.queue());
}

void Renderer::destroy_swapchain_images() {
    m_framebuffers.clear();
    m_views.clear();
    m_rendered.clear();
    m_images.clear();
    m_offscreen.reset();
    m_offscreen_memory.reset();
}

bool Renderer::create_targets() {
    VkExtent2D ext{};
    VkSurfaceCapabilitiesKHR caps{};
    int w, h;
    glfwGetFramebufferSize(m_window, &w, &h);
    if (m_shm) {
        ext = {uint32_t(std::max(w, 0)), uint32_t(std::max(h, 0))};
    } else {
        VK_CHECK(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(m_ctx.physical(), m_ctx.surface(), &caps));
        ext = caps.currentExtent;
        if (ext.width == UINT32_MAX) {
            ext.width = std::clamp(uint32_t(w), caps.minImageExtent.width, caps.maxImageExtent.width);
            ext.height = std::clamp(uint32_t(h), caps.minImageExtent.height, caps.maxImageExtent.height);
        }
    }
    if (ext.width == 0 || ext.height == 0) return false;
    wait_queue_idle();
    destroy_swapchain_images();
    m_extent = ext;
    m_prev_valid = false;  // a new image holds no frame yet
    if (m_shm) {
        create_offscreen(ext);
    } else {
        create_swapchain(ext, caps);
    }
    for (VkImage img : m_images) {
        VkDevice dev = m_ctx.device();
        VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
        vi.image = img;
        vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
        vi.format = m_format.format;
        vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        VkImageView view;
        VK_CHECK(vkCreateImageView(dev, &vi, nullptr, &view));
        m_views.emplace_back(view, [dev](VkImageView h) { vkDestroyImageView(dev, h, nullptr); });
        VkFramebufferCreateInfo fi{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
        fi.renderPass = m_render_pass;
        fi.attachmentCount = 1;
        fi.pAttachments = &view;
        fi.width = ext.width;
        fi.height = ext.height;
        fi.layers = 1;
        VkFramebuffer fb;
        VK_CHECK(vkCreateFramebuffer(dev, &fi, nullptr, &fb));
        m_framebuffers.emplace_back(fb, [dev](VkFramebuffer h) { vkDestroyFramebuffer(dev, h, nullptr); });
        VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        VkSemaphore sem;
        VK_CHECK(vkCreateSemaphore(dev, &si, nullptr, &sem));
        m_rendered.emplace_back(sem, [dev](VkSemaphore h) { vkDestroySemaphore(dev, h, nullptr); });
    }
    if (m_can_grab) m_readback = Buffer(m_ctx, size_t(ext.width) * ext.height * 4, true);
    m_need_recreate = false;
    return true;
}

void Renderer::create_offscreen(VkExtent2D ext) {
    VkDevice dev = m_ctx.device();
    if (!m_shm->resize(int(ext.width), int(ext.height)))  // the run goes on (and autosaves); the window stays as it was
        std::fprintf(stderr, "attnlab: the X server refused a %ux%u shared-memory image: the window is not redrawn at "
                     "this size (resize it, or restart with ATTN_PRESENT=swapchain)\n", ext.width, ext.height);
    VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    ii.imageType = VK_IMAGE_TYPE_2D;
    ii.format = m_format.format;
    ii.extent = {ext.width, ext.height, 1};
    ii.mipLevels = 1;
    ii.arrayLayers = 1;
    ii.samples = VK_SAMPLE_COUNT_1_BIT;
    ii.tiling = VK_IMAGE_TILING_OPTIMAL;
    ii.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
    ii.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    ii.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    VkImage img;
    VK_CHECK(vkCreateImage(dev, &ii, nullptr, &img));
    m_offscreen = Handle<VkImage>(img, [dev](VkImage h) { vkDestroyImage(dev, h, nullptr); });
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(dev, img, &req);
    uint32_t type = m_ctx.find_memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type == UINT32_MAX) type = m_ctx.find_memory_type(req.memoryTypeBits, 0);
    if (type == UINT32_MAX) throw Error("no memory type for the window's image: check the Vulkan driver");
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    VkDeviceMemory mem;
    VK_CHECK(vkAllocateMemory(dev, &ai, nullptr, &mem));
    Context* ctx = &m_ctx;
    int64_t bytes = int64_t(req.size);
    ctx->track_allocation(bytes);
    m_offscreen_memory = Handle<VkDeviceMemory>(mem, [dev, ctx, bytes](VkDeviceMemory h) {
        vkFreeMemory(dev, h, nullptr);
        ctx->track_allocation(-bytes);
    });
    VK_CHECK(vkBindImageMemory(dev, img, mem, 0));
    m_images = {img};
}

void Renderer::create_swapchain(VkExtent2D ext, const VkSurfaceCapabilitiesKHR& caps) {
    VkDevice dev = m_ctx.device();
    m_can_grab = (caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_SRC_BIT) != 0;
    VkSwapchainCreateInfoKHR sci{VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR};
    sci.surface = m_ctx.surface();
    sci.minImageCount = std::max(caps.minImageCount, 2u);
    if (caps.maxImageCount) sci.minImageCount = std::min(sci.minImageCount, caps.maxImageCount);
    sci.imageFormat = m_format.format;
    sci.imageColorSpace = m_format.colorSpace;
    sci.imageExtent = ext;
    sci.imageArrayLayers = 1;
    sci.imageUsage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | (m_can_grab ? VK_IMAGE_USAGE_TRANSFER_SRC_BIT : 0);
    sci.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
    sci.preTransform = (caps.supportedTransforms & VK_SURFACE_TRANSFORM_IDENTITY_BIT_KHR) ? VK_SURFACE_TRANSFORM_IDENTITY_BIT_KHR
                                                                                        : caps.currentTransform;
    sci.compositeAlpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
    for (auto a : {VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR, VK_COMPOSITE_ALPHA_INHERIT_BIT_KHR, VK_COMPOSITE_ALPHA_PRE_MULTIPLIED_BIT_KHR,
                   VK_COMPOSITE_ALPHA_POST_MULTIPLIED_BIT_KHR})
        if (caps.supportedCompositeAlpha & a) {
            sci.compositeAlpha = a;
            break;
        }
    sci.presentMode = m_present_mode;
    sci.clipped = VK_TRUE;
    sci.oldSwapchain = m_swapchain;
    VkSwapchainKHR sc;
    VK_CHECK(vkCreateSwapchainKHR(dev, &sci, nullptr, &sc));
    m_swapchain = Handle<VkSwapchainKHR>(sc, [dev](VkSwapchainKHR h) { vkDestroySwapchainKHR(dev, h, nullptr); });

    uint32_t n = 0;
    VK_CHECK(vkGetSwapchainImagesKHR(dev, sc, &n, nullptr));
    m_images.resize(n);
    VK_CHECK(vkGetSwapchainImagesKHR(dev, sc, &n, m_images.data()));
}

// Where add_opaque_fill's callbacks clear: set by record_frame around each ImGui_ImplVulkan_RenderDrawData (the UI
// thread's, which alone draws).
static struct {
    VkCommandBuffer cb = VK_NULL_HANDLE;
    ImVec2 off{0, 0}, scale{1, 1};
    VkExtent2D extent{};
} g_fill;

void opaque_fill(const ImDrawList*, const ImDrawCmd* c) {
    if (!g_fill.cb) return;
    // the pixels whose centres lie in the clip rectangle (the fill's rectangle cut by the list's clipping), the
    // left and top edges included, as for triangles
    auto px = [](float v, float off, float scale, uint32_t n) {
        return std::clamp(int32_t(std::ceil((v - off) * scale - 0.5f)), 0, int32_t(n));
    };
    int32_t x0 = px(c->ClipRect.x, g_fill.off.x, g_fill.scale.x, g_fill.extent.width);
    int32_t y0 = px(c->ClipRect.y, g_fill.off.y, g_fill.scale.y, g_fill.extent.height);
    int32_t x1 = px(c->ClipRect.z, g_fill.off.x, g_fill.scale.x, g_fill.extent.width);
    int32_t y1 = px(c->ClipRect.w, g_fill.off.y, g_fill.scale.y, g_fill.extent.height);
    if (x1 <= x0 || y1 <= y0) return;
    ImVec4 col = ImGui::ColorConvertU32ToFloat4(ImU32(reinterpret_cast<uintptr_t>(c->UserCallbackData)));
    VkClearAttachment ca{VK_IMAGE_ASPECT_COLOR_BIT, 0, {}};
    ca.clearValue.color = {{col.x, col.y, col.z, col.w}};  // as the frame's own clear (record_frame)
    VkClearRect r{{{x0, y0}, {uint32_t(x1 - x0), uint32_t(y1 - y0)}}, 0, 1};
    vkCmdClearAttachments(g_fill.cb, 1, &ca, 1, &r);
}

void add_opaque_fill(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 colour) {
    if (((colour >> IM_COL32_A_SHIFT) & 0xFF) != 0xFF) {
        dl->AddRectFilled(a, b, colour);
        return;
    }
    dl->PushClipRect(a, b, true);  // cut by the clipping in force
    dl->AddCallback(opaque_fill, reinterpret_cast<void*>(uintptr_t(colour)));
    dl->PopClipRect();
}

// Draws `dd` into the frame (all of it from a clear, or with `draw`: only those lists, over the kept frame with the
// `clear` rectangles cleared first), then with copy_out the frame into m_readback (with `draw`, only the `clear`
// rectangles: every pixel drawn lies in them, and m_readback holds the rest from the frames before).
void Renderer::record_frame(VkCommandBuffer cb, ImDrawData* dd, const std::vector<DrawItem>* draw,
                            const std::vector<VkClearRect>* clear, bool copy_out, uint32_t index) {
    VkClearValue bg_clear{};
    const ImVec4& bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];  // the panels draw no background of their own
    bg_clear.color = {{bg.x, bg.y, bg.z, 1.0f}};
    VkRenderPassBeginInfo rbi{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    rbi.renderPass = draw ? m_render_pass_load : m_render_pass;
    rbi.framebuffer = m_framebuffers[index];
    rbi.renderArea.extent = m_extent;
    rbi.clearValueCount = 1;
    rbi.pClearValues = &bg_clear;
    vkCmdBeginRenderPass(cb, &rbi, VK_SUBPASS_CONTENTS_INLINE);
    g_fill = {cb, dd->DisplayPos, dd->FramebufferScale, m_extent};
    if (!draw) {
        ImGui_ImplVulkan_RenderDrawData(dd, cb);
    } else if (!draw->empty()) {
        if (!clear->empty()) {
            VkClearAttachment ca{VK_IMAGE_ASPECT_COLOR_BIT, 0, bg_clear};
            vkCmdClearAttachments(cb, 1, &ca, uint32_t(clear->size()), clear->data());
        }
        std::vector<ImDrawList*> lists;
        std::vector<std::unique_ptr<ImDrawList, void (*)(ImDrawList*)>> clones;  // clipped copies, freed once recorded
        ImDrawData part = *dd;
        part.TotalVtxCount = part.TotalIdxCount = 0;
        for (const DrawItem& it : *draw) {
            ImDrawList* l = dd->CmdLists[it.list];
            if (it.clipped) {  // the list's clip rectangles cut down to the cleared rectangle (display coordinates)
                clones.emplace_back(l->CloneOutput(), [](ImDrawList* c) { IM_DELETE(c); });
                l = clones.back().get();
                ImVec2 off = dd->DisplayPos, scale = dd->FramebufferScale;
                float x0 = it.clip.offset.x / scale.x + off.x, y0 = it.clip.offset.y / scale.y + off.y;
                float x1 = (it.clip.offset.x + float(it.clip.extent.width)) / scale.x + off.x;
                float y1 = (it.clip.offset.y + float(it.clip.extent.height)) / scale.y + off.y;
                for (ImDrawCmd& c : l->CmdBuffer)  // an empty result is skipped by the backend
                    c.ClipRect = ImVec4(std::max(c.ClipRect.x, x0), std::max(c.ClipRect.y, y0), std::min(c.ClipRect.z, x1),
                                        std::min(c.ClipRect.w, y1));
            }
            lists.push_back(l);
            part.TotalVtxCount += l->VtxBuffer.Size;
            part.TotalIdxCount += l->IdxBuffer.Size;
        }
        part.CmdLists = lists.data();
        part.CmdListsCount = int(lists.size());
        ImGui_ImplVulkan_RenderDrawData(&part, cb);
    }
    g_fill.cb = VK_NULL_HANDLE;
    vkCmdEndRenderPass(cb);
    if (copy_out) {  // the rendered image into m_readback
        VkImageMemoryBarrier ib{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
        ib.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
        ib.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
        ib.oldLayout = m_final_layout;
        ib.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        ib.srcQueueFamilyIndex = ib.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        ib.image = m_images[index];
        ib.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr,
                             0, nullptr, 1, &ib);
        std::vector<VkBufferImageCopy> regions;
        VkBufferImageCopy whole{};
        whole.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        whole.imageExtent = {m_extent.width, m_extent.height, 1};
        if (!draw) regions.push_back(whole);
        else
            for (const VkClearRect& c : *clear) {  // rows of the whole frame's width, in place
                VkBufferImageCopy r = whole;
                r.bufferOffset = (VkDeviceSize(c.rect.offset.y) * m_extent.width + VkDeviceSize(c.rect.offset.x)) * 4;
                r.bufferRowLength = m_extent.width;
                r.imageOffset = {c.rect.offset.x, c.rect.offset.y, 0};
                r.imageExtent = {c.rect.extent.width, c.rect.extent.height, 1};
                regions.push_back(r);
            }
        if (!regions.empty())
            vkCmdCopyImageToBuffer(cb, m_images[index], VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, m_readback.get(),
                                   uint32_t(regions.size()), regions.data());
        if (!m_shm) {  // back for the present
            ib.srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
            ib.dstAccessMask = 0;
            ib.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
            ib.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
            vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, nullptr,
                                 0, nullptr, 1, &ib);
        }
        VkBufferMemoryBarrier bb{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
        bb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        bb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
        bb.srcQueueFamilyIndex = bb.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        bb.buffer = m_readback.get();
        bb.size = VK_WHOLE_SIZE;
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0, nullptr, 1, &bb, 0,
                             nullptr);
    }
}

void Renderer::submit_and_wait(Frame& f) {
    VkFence fence = f.fence;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &f.cb;
    {
        std::lock_guard lk(m_ctx.queue_mutex());
        VK_CHECK(vkQueueSubmit(m_ctx.queue(), 1, &si, fence));
    }
    VK_CHECK(vkWaitForFences(m_ctx.device(), 1, &fence, VK_TRUE, UINT64_MAX));
}

bool Renderer::render(ImDrawData* draw_data, Image* grab) {
    VkDevice dev = m_ctx.device();
    int fw, fh;
    glfwGetFramebufferSize(m_window, &fw, &fh);
    if (fw == 0 || fh == 0) return false;
    if (m_need_recreate || uint32_t(fw) != m_extent.width || uint32_t(fh) != m_extent.height || m_images.empty())
        if (!create_targets()) return false;

    Frame& f = m_frames[m_frame];
    VkFence fence = f.fence;
    VK_CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
    uint32_t index = 0;
    VkResult r = VK_SUCCESS;
    if (!m_shm) {
        r = vkAcquireNextImageKHR(dev, m_swapchain, UINT64_MAX, f.acquired, VK_NULL_HANDLE, &index);
        if (r == VK_ERROR_OUT_OF_DATE_KHR) {
            m_need_recreate = true;
            return false;
        }
        if (r != VK_SUBOPTIMAL_KHR) VK_CHECK(r);
    }
    VK_CHECK(vkResetFences(dev, 1, &fence));
    VK_CHECK(vkResetCommandPool(dev, f.pool, 0));
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VK_CHECK(vkBeginCommandBuffer(f.cb, &bi));
    bool grabbing = grab && m_can_grab;
    std::vector<DrawItem> draw;
    std::vector<VkClearRect> clear;
    bool partial = m_shm && m_partial_redraw && plan_redraw(draw_data, draw, clear);
    record_frame(f.cb, draw_data, partial ? &draw : nullptr, partial ? &clear : nullptr, grabbing || m_shm, index);
    VK_CHECK(vkEndCommandBuffer(f.cb));

    if (m_shm) {
        // The queue is held only to submit; the frame goes to the X server from m_readback, without it.
        submit_and_wait(f);
        if (partial && m_check_redraw) {
            double area = 0;
            for (const VkClearRect& c : clear) area += double(c.rect.extent.width) * c.rect.extent.height;
            m_cleared_share += std::min(1.0, area / (double(m_extent.width) * m_extent.height));
            check_partial(draw_data, f);
        }
        // Only what changed goes to the X server (on a CPU driver each copy of a 1280x800 frame costs about a
        // millisecond), and the whole frame at least every k_full_present, for a window uncovered meanwhile (not
        // with ATTN_CHECK_REDRAW: tests/app_present_test.sh then sees what the partial presents alone made).
        std::vector<X11ShmPresenter::Rect> rects;
        auto now = std::chrono::steady_clock::now();
        bool whole = !partial || (!m_check_redraw && now - m_full_presented >= k_full_present);
        if (whole) m_full_presented = now;
        else
            for (const VkClearRect& c : clear)
                rects.push_back({c.rect.offset.x, c.rect.offset.y, int(c.rect.extent.width), int(c.rect.extent.height)});
        m_shm->present(static_cast<const uint8_t*>(m_readback.mapped()), size_t(m_extent.width) * 4,
                       whole ? nullptr : &rects);
    } else {
    VkSemaphore wait = f.acquired, signal = m_rendered[index];
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.waitSemaphoreCount = 1;
    si.pWaitSemaphores = &wait;
    si.pWaitDstStageMask = &stage;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &f.cb;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &signal;
    VkSwapchainKHR sc = m_swapchain;
    VkPresentInfoKHR pi{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
    pi.waitSemaphoreCount = 1;
    pi.pWaitSemaphores = &signal;
    pi.swapchainCount = 1;
    pi.pSwapchains = &sc;
    pi.pImageIndices = &index;
    {
        // One queue for training and drawing: every submit and present takes the context's lock. A software
        // present (lavapipe) blocks until the frame is drawn, so wait for that without the lock: the training
        // thread can submit meanwhile instead of stalling for the whole frame.
        std::unique_lock lk(m_ctx.queue_mutex());
        VK_CHECK(vkQueueSubmit(m_ctx.queue(), 1, &si, fence));
        lk.unlock();
        VK_CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
        lk.lock();
        r = vkQueuePresentKHR(m_ctx.queue(), &pi);
    }
    if (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_SUBOPTIMAL_KHR)
        m_need_recreate = true;
    else
        VK_CHECK(r);
    }
    m_frame = (m_frame + 1) % k_frames;

    if (grabbing) {
        VK_CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
        grab->width = int(m_extent.width);
        grab->height = int(m_extent.height);
        size_t px = size_t(m_extent.width) * m_extent.height;
        grab->rgba.resize(px * 4);
        std::memcpy(grab->rgba.data(), m_readback.mapped(), px * 4);
        bool bgra = m_format.format == VK_FORMAT_B8G8R8A8_UNORM || m_format.format == VK_FORMAT_B8G8R8A8_SRGB;
        for (size_t i = 0; i < px; i++) {
            uint8_t* p = &grab->rgba[i * 4];
            if (bgra) std::swap(p[0], p[2]);
            p[3] = 255;
        }
    }
    return true;
}

}  // namespace attn
