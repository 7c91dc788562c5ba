// Partial redraw (Renderer::plan_redraw): which draw lists changed since the last frame, the rectangles to clear and
// redraw over the kept frame, and (ATTN_CHECK_REDRAW=1, tests) the check of a partial frame against a full one.
#include "renderer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <imgui.h>

namespace attn {

// add_opaque_fill's draw callback (renderer.cpp): its rectangle is a clear, which plan_redraw takes as drawn pixels
void opaque_fill(const ImDrawList*, const ImDrawCmd* c);

// FNV-1a over a list's vertices, indices and commands: equal hashes, the same pixels drawn
static uint64_t hash_list(const ImDrawList* l) {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](const void* p, size_t n) {
        const uint8_t* b = static_cast<const uint8_t*>(p);
        for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    };
    mix(l->VtxBuffer.Data, size_t(l->VtxBuffer.Size) * sizeof(ImDrawVert));
    mix(l->IdxBuffer.Data, size_t(l->IdxBuffer.Size) * sizeof(ImDrawIdx));
    for (const ImDrawCmd& c : l->CmdBuffer) {
        mix(&c.ClipRect, sizeof c.ClipRect);
        mix(&c.TextureId, sizeof c.TextureId);
        mix(&c.VtxOffset, sizeof c.VtxOffset);
        mix(&c.IdxOffset, sizeof c.IdxOffset);
        mix(&c.ElemCount, sizeof c.ElemCount);
        mix(&c.UserCallback, sizeof c.UserCallback);
        mix(&c.UserCallbackData, sizeof c.UserCallbackData);  // add_opaque_fill's colour
    }
    return h;
}

static bool overlap(const VkRect2D& a, const VkRect2D& b) {
    return a.offset.x < b.offset.x + int32_t(b.extent.width) && b.offset.x < a.offset.x + int32_t(a.extent.width) &&
           a.offset.y < b.offset.y + int32_t(b.extent.height) && b.offset.y < a.offset.y + int32_t(a.extent.height);
}

// Appends a minus b as up to four rectangles (above, below, left, right of b).
static void subtract(const VkRect2D& a, const VkRect2D& b, std::vector<VkRect2D>& out) {
    if (!overlap(a, b)) {
        out.push_back(a);
        return;
    }
    int32_t ax0 = a.offset.x, ay0 = a.offset.y, ax1 = ax0 + int32_t(a.extent.width), ay1 = ay0 + int32_t(a.extent.height);
    int32_t bx0 = b.offset.x, by0 = b.offset.y, bx1 = bx0 + int32_t(b.extent.width), by1 = by0 + int32_t(b.extent.height);
    auto put = [&out](int32_t x0, int32_t y0, int32_t x1, int32_t y1) {
        if (x1 > x0 && y1 > y0) out.push_back({{x0, y0}, {uint32_t(x1 - x0), uint32_t(y1 - y0)}});
    };
    put(ax0, ay0, ax1, by0);                                   // above
    put(ax0, by1, ax1, ay1);                                   // below
    put(ax0, std::max(ay0, by0), bx0, std::min(ay1, by1));     // left
    put(bx1, std::max(ay0, by0), ax1, std::min(ay1, by1));     // right
}

static VkRect2D unite(const VkRect2D& a, const VkRect2D& b) {
    if (!a.extent.width || !a.extent.height) return b;
    if (!b.extent.width || !b.extent.height) return a;
    int32_t x0 = std::min(a.offset.x, b.offset.x), y0 = std::min(a.offset.y, b.offset.y);
    int32_t x1 = std::max(a.offset.x + int32_t(a.extent.width), b.offset.x + int32_t(b.extent.width));
    int32_t y1 = std::max(a.offset.y + int32_t(a.extent.height), b.offset.y + int32_t(b.extent.height));
    return {{x0, y0}, {uint32_t(x1 - x0), uint32_t(y1 - y0)}};
}

bool Renderer::plan_redraw(const ImDrawData* dd, std::vector<DrawItem>& draw, std::vector<VkClearRect>& clear) {
    // This frame's lists: owner, hash, and a rectangle holding every pixel the list can touch: its clip rectangles'
    // union ...
    std::vector<ListKey> cur(size_t(dd->CmdListsCount));
    ImVec2 off = dd->DisplayPos, scale = dd->FramebufferScale;
    for (int i = 0; i < dd->CmdListsCount; i++) {
        const ImDrawList* l = dd->CmdLists[i];
        cur[i].owner = l->_OwnerName ? l->_OwnerName : "";
        cur[i].hash = hash_list(l);
        VkRect2D r{};
        for (const ImDrawCmd& c : l->CmdBuffer) {
            float x0 = std::floor((c.ClipRect.x - off.x) * scale.x), y0 = std::floor((c.ClipRect.y - off.y) * scale.y);
            float x1 = std::ceil((c.ClipRect.z - off.x) * scale.x), y1 = std::ceil((c.ClipRect.w - off.y) * scale.y);
            x0 = std::max(x0, 0.0f), y0 = std::max(y0, 0.0f);
            x1 = std::min(x1, float(m_extent.width)), y1 = std::min(y1, float(m_extent.height));
            if (x1 <= x0 || y1 <= y0) continue;
            r = unite(r, {{int32_t(x0), int32_t(y0)}, {uint32_t(x1 - x0), uint32_t(y1 - y0)}});
        }
        // ... within the bounding box of its vertices (a window's clip rectangles may span the whole display)
        float vx0 = 1e30f, vy0 = 1e30f, vx1 = -1e30f, vy1 = -1e30f;
        for (const ImDrawVert& v : l->VtxBuffer) {
            vx0 = std::min(vx0, v.pos.x), vy0 = std::min(vy0, v.pos.y);
            vx1 = std::max(vx1, v.pos.x), vy1 = std::max(vy1, v.pos.y);
        }
        for (const ImDrawCmd& c : l->CmdBuffer)  // add_opaque_fill's rectangles have no vertices
            if (c.UserCallback == opaque_fill) {
                vx0 = std::min(vx0, c.ClipRect.x), vy0 = std::min(vy0, c.ClipRect.y);
                vx1 = std::max(vx1, c.ClipRect.z), vy1 = std::max(vy1, c.ClipRect.w);
            }
        int32_t bx0 = int32_t(std::max(std::floor((vx0 - off.x) * scale.x), float(r.offset.x)));
        int32_t by0 = int32_t(std::max(std::floor((vy0 - off.y) * scale.y), float(r.offset.y)));
        int32_t bx1 = int32_t(std::min(std::ceil((vx1 - off.x) * scale.x), float(r.offset.x + int32_t(r.extent.width))));
        int32_t by1 = int32_t(std::min(std::ceil((vy1 - off.y) * scale.y), float(r.offset.y + int32_t(r.extent.height))));
        cur[i].rect = bx1 > bx0 && by1 > by0 ? VkRect2D{{bx0, by0}, {uint32_t(bx1 - bx0), uint32_t(by1 - by0)}} : VkRect2D{};
    }
    bool partial = m_prev_valid && m_prev.size() == cur.size();
    for (size_t i = 0; partial && i < cur.size(); i++) partial = cur[i].owner == m_prev[i].owner;
    draw.clear();
    clear.clear();
    if (partial) {
        // Cleared: the old and new rectangles of every changed list, cut into rectangles that do not overlap (a list
        // drawn clipped to two overlapping rectangles would blend twice where they meet).
        std::vector<VkRect2D> region;
        for (size_t i = 0; i < cur.size(); i++)
            if (cur[i].hash != m_prev[i].hash) {
                std::vector<VkRect2D> add{unite(cur[i].rect, m_prev[i].rect)};
                for (const VkRect2D& have : region) {
                    std::vector<VkRect2D> rest;
                    for (const VkRect2D& r : add) subtract(r, have, rest);
                    add.swap(rest);
                }
                for (const VkRect2D& r : add)
                    if (r.extent.width && r.extent.height) region.push_back(r);
            }
        // In order: a changed list whole (it lies inside the region); an unchanged one clipped to each cleared
        // rectangle it touches (its pixels outside them are still in the frame).
        for (size_t i = 0; i < cur.size(); i++) {
            if (cur[i].hash != m_prev[i].hash) {
                draw.push_back({int(i), false, {}});
                continue;
            }
            for (const VkRect2D& r : region)
                if (overlap(cur[i].rect, r)) draw.push_back({int(i), true, r});
        }
        for (const VkRect2D& r : region) clear.push_back({r, 0, 1});
    }
    m_prev = std::move(cur);
    m_prev_valid = true;
    return partial;
}

void Renderer::check_partial(ImDrawData* dd, Frame& f) {
    VkDevice dev = m_ctx.device();
    size_t bytes = size_t(m_extent.width) * m_extent.height * 4;
    std::vector<uint8_t> part(bytes);
    std::memcpy(part.data(), m_readback.mapped(), bytes);
    VK_CHECK(vkResetCommandPool(dev, f.pool, 0));
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VK_CHECK(vkBeginCommandBuffer(f.cb, &bi));
    record_frame(f.cb, dd, nullptr, nullptr, true, 0);
    VK_CHECK(vkEndCommandBuffer(f.cb));
    VkFence fence = f.fence;
    VK_CHECK(vkResetFences(dev, 1, &fence));
    submit_and_wait(f);
    m_partial_frames++;
    if (std::memcmp(part.data(), m_readback.mapped(), bytes) != 0) m_partial_mismatches++;
}

}  // namespace attn
