// Whether an element-wise op may take its vec4 path: whole vec4s at offsets a texel view can start at (16 bytes, or
// the device's texel-view alignment when larger). The vec4 shaders read RGBA32F texels and store vec4s.
#pragma once
#include <algorithm>
#include <initializer_list>

#include "vk/program.h"

namespace attn::ops {

inline bool vec4_views(const Context& ctx, uint32_t n, std::initializer_list<BufferRange> ranges) {
    if (n % 4 != 0) return false;
    size_t align = std::max<size_t>(16, ctx.props().limits.minTexelBufferOffsetAlignment);
    for (const BufferRange& r : ranges)
        if (r.offset % align != 0) return false;
    return true;
}

}  // namespace attn::ops
