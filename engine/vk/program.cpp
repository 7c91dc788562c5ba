// Kernel creation from embedded SPIR-V; Program recording, descriptor allocation and submission.
#include "vk/program.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "vk/shaders.h"

namespace attn {

static VkDescriptorType descriptor_type(char c) {
    return c == 's' ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
         : c == 'u' ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                    : VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
}

Kernel::Kernel(Context& ctx, const std::string& name, const std::string& layout, uint32_t push_bytes, uint32_t spec,
               uint32_t flags)
    : m_name(name), m_layout_str(layout), m_push_bytes(push_bytes), m_dev(ctx.device()), m_spec(spec), m_flags(flags) {
    uint32_t bindings = uint32_t(layout.size());
    VkDevice dev = ctx.device();
    const EmbeddedShader* s = find_shader(name.c_str());
    if (!s) throw Error("internal error: shader '" + name + "' is not embedded in this build");
    VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mi.codeSize = s->bytes;
    mi.pCode = s->words;
    VkShaderModule mod;
    VK_CHECK(vkCreateShaderModule(dev, &mi, nullptr, &mod));
    m_module = Handle<VkShaderModule>(mod, [dev](VkShaderModule h) { vkDestroyShaderModule(dev, h, nullptr); });

    std::vector<VkDescriptorSetLayoutBinding> b(bindings);
    for (uint32_t i = 0; i < bindings; i++) b[i] = {i, descriptor_type(layout[i]), 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    li.bindingCount = bindings;
    li.pBindings = b.data();
    VkDescriptorSetLayout sl;
    VK_CHECK(vkCreateDescriptorSetLayout(dev, &li, nullptr, &sl));
    m_set_layout = Handle<VkDescriptorSetLayout>(sl, [dev](VkDescriptorSetLayout h) { vkDestroyDescriptorSetLayout(dev, h, nullptr); });

    VkPushConstantRange pr{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &sl;
    pli.pushConstantRangeCount = push_bytes ? 1 : 0;
    pli.pPushConstantRanges = &pr;
    VkPipelineLayout pl;
    VK_CHECK(vkCreatePipelineLayout(dev, &pli, nullptr, &pl));
    m_layout = Handle<VkPipelineLayout>(pl, [dev](VkPipelineLayout h) { vkDestroyPipelineLayout(dev, h, nullptr); });

    // OpDecorate (opcode 71, 4 words) of any id with SpecId (decoration 1) 1: index.glsl's local_size_x_id
    const uint32_t* w = s->words;
    for (size_t i = 5, n = s->bytes / 4; i < n && (w[i] >> 16) > 0; i += w[i] >> 16)
        if (w[i] == (71u | 4u << 16) && i + 3 < n && w[i + 2] == 1 && w[i + 3] == 1) m_resizable = true;
}

VkPipeline Kernel::pipeline() const {
    if (!m_pipeline) {
        VkDevice dev = m_dev;
        m_pipeline = Handle<VkPipeline>(make_pipeline(0), [dev](VkPipeline h) { vkDestroyPipeline(dev, h, nullptr); });
    }
    return m_pipeline;
}

VkPipeline Kernel::make_pipeline(uint32_t lanes) const {
    VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = m_module;
    ci.stage.pName = "main";
    // constants 0 (spec), 1 (the workgroup size), 2 (flags), each only where set: the others keep their defaults
    uint32_t values[3] = {m_spec, lanes, m_flags};
    VkSpecializationMapEntry entries[3];
    uint32_t n = 0;
    for (uint32_t id = 0; id < 3; id++)
        if (id == 0 ? m_spec != 0 : id == 1 ? lanes != 0 : m_flags != kflag::all) entries[n++] = {id, id * 4, 4};
    VkSpecializationInfo si{n, entries, sizeof values, values};
    if (n) ci.stage.pSpecializationInfo = &si;
    ci.layout = m_layout;
    ci.flags = VK_PIPELINE_CREATE_DISPATCH_BASE;  // segmented programs split dispatches with vkCmdDispatchBase
    VkPipeline p;
    VK_CHECK(vkCreateComputePipelines(m_dev, VK_NULL_HANDLE, 1, &ci, nullptr, &p));
    return p;
}

VkPipeline Kernel::narrow_pipeline(uint32_t lanes) const {
    if (!m_resizable || lanes == 0) return VK_NULL_HANDLE;
    if (m_narrow && m_narrow_lanes == lanes) return m_narrow;
    VkDevice dev = m_dev;
    m_narrow = Handle<VkPipeline>(make_pipeline(lanes), [dev](VkPipeline h) { vkDestroyPipeline(dev, h, nullptr); });
    m_narrow_lanes = lanes;
    return m_narrow;
}

const Kernel& KernelCache::get(const std::string& name, const std::string& layout, uint32_t push_bytes, uint32_t spec,
                               uint32_t flags) {
    // ATTNLAB_KERNEL_FLAGS=all: every pipeline keeps every part (tests, benchmarks)
    if (m_ctx.policy().all_kernel_flags) flags = kflag::all;
    std::string key = name + "#" + std::to_string(spec) + "/" + std::to_string(flags);
    auto it = m_kernels.find(key);
    if (it != m_kernels.end()) {
        if (it->second->layout_string() != layout || it->second->push_bytes() != push_bytes)
            throw Error("internal error: kernel '" + name + "' requested with two different layouts");
        return *it->second;
    }
    auto k = std::make_unique<Kernel>(m_ctx, name, layout, push_bytes, spec, flags);
    auto& ref = *k;
    m_kernels.emplace(key, std::move(k));
    return ref;
}

static constexpr uint32_t SETS_PER_POOL = 128;
static constexpr uint32_t MAX_BINDINGS = 12;

static constexpr uint32_t MAX_PROFILED = 510;
static constexpr uint64_t k_min_piece_groups = 4;  // Program::dispatch, segmented

Program::Program(Context& ctx, bool profile, double submit_budget)
    : m_ctx(ctx), m_budget(submit_budget), m_profile(profile) {
    VkDevice dev = ctx.device();
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = ctx.queue_family();
    VkCommandPool pool;
    VK_CHECK(vkCreateCommandPool(dev, &pci, nullptr, &pool));
    m_pool = Handle<VkCommandPool>(pool, [dev](VkCommandPool h) { vkDestroyCommandPool(dev, h, nullptr); });
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence f;
    VK_CHECK(vkCreateFence(dev, &fi, nullptr, &f));
    m_fence = Handle<VkFence>(f, [dev](VkFence h) { vkDestroyFence(dev, h, nullptr); });
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = m_profile ? MAX_PROFILED + 2 : 2;
    VkQueryPool q;
    VK_CHECK(vkCreateQueryPool(dev, &qi, nullptr, &q));
    m_queries = Handle<VkQueryPool>(q, [dev](VkQueryPool h) { vkDestroyQueryPool(dev, h, nullptr); });
}

VkDescriptorSet Program::allocate_set(const Kernel& k) {
    VkDevice dev = m_ctx.device();
    if (m_desc_pools.empty() || m_sets_in_pool == SETS_PER_POOL) {
        VkDescriptorPoolSize sizes[3] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, SETS_PER_POOL * MAX_BINDINGS},
                                         {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, SETS_PER_POOL * MAX_BINDINGS},
                                         {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, SETS_PER_POOL}};
        VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        pi.maxSets = SETS_PER_POOL;
        pi.poolSizeCount = 3;
        pi.pPoolSizes = sizes;
        VkDescriptorPool p;
        VK_CHECK(vkCreateDescriptorPool(dev, &pi, nullptr, &p));
        m_desc_pools.emplace_back(p, [dev](VkDescriptorPool h) { vkDestroyDescriptorPool(dev, h, nullptr); });
        m_sets_in_pool = 0;
    }
    VkDescriptorSetLayout sl = k.set_layout();
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = m_desc_pools.back();
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &sl;
    VkDescriptorSet set;
    VK_CHECK(vkAllocateDescriptorSets(dev, &ai, &set));
    m_sets_in_pool++;
    return set;
}

void Program::cut() {
    if (m_used > 0) VK_CHECK(vkEndCommandBuffer(m_cb));
    if (m_used == m_cbs.size()) {
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = m_pool;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        VkCommandBuffer cb;
        VK_CHECK(vkAllocateCommandBuffers(m_ctx.device(), &ai, &cb));
        m_cbs.push_back(cb);
    }
    m_cb = m_cbs[m_used++];
    VK_CHECK(vkResetCommandBuffer(m_cb, 0));
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK_CHECK(vkBeginCommandBuffer(m_cb, &bi));
    m_seg_cost = 0;
}

void Program::begin() {
    m_used = 0;
    cut();
    for (auto& p : m_desc_pools) vkResetDescriptorPool(m_ctx.device(), p, 0);
    m_desc_pools.resize(std::min<size_t>(m_desc_pools.size(), 1));
    m_views.clear();  // safe: a Program is only re-recorded when no submit of it is in flight
    m_sets_in_pool = 0;
    m_dispatches = 0;
    m_pieces = 0;
    m_timed = false;  // a new recording: the next run reads its time
    vkCmdResetQueryPool(m_cb, m_queries, 0, m_profile ? MAX_PROFILED + 2 : 2);
    m_names.clear();
    vkCmdWriteTimestamp(m_cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, m_queries, 0);
    m_recorded = false;
}

void Program::dispatch(const Kernel& k, std::initializer_list<BufferRange> buffers, const void* push, size_t push_bytes,
                       uint64_t n, double cost) {
    if (buffers.size() != k.bindings())
        throw Error("internal error: kernel '" + k.name() + "' bound with " + std::to_string(buffers.size()) +
                    " buffers, expects " + std::to_string(k.bindings()));
    if (push_bytes != k.push_bytes()) throw Error("internal error: push-constant size mismatch for " + k.name());
    if (n == 0) return;
    VkDescriptorSet set = allocate_set(k);
    VkDescriptorBufferInfo infos[MAX_BINDINGS];
    VkBufferView views[MAX_BINDINGS];
    VkWriteDescriptorSet writes[MAX_BINDINGS];
    uint32_t i = 0;
    const auto& lim = m_ctx.props().limits;
    for (const auto& r : buffers) {
        char kind = k.layout_string()[i];
        size_t range = r.bytes ? r.bytes : r.buffer->bytes() - r.offset;
        if (range == 0) range = 4;  // empty tensors still need a valid binding
        writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[i].dstSet = set;
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = descriptor_type(kind);
        if (kind == 's') {
            if (range > m_ctx.policy().max_storage_range)
                throw Error("a tensor of " + std::to_string(range >> 10) + " KiB exceeds this GPU's storage-buffer limit of " +
                            std::to_string(m_ctx.policy().max_storage_range >> 10) + " KiB (kernel " + k.name() +
                            "): use a smaller batch or block size");
            infos[i] = {r.buffer->get(), r.offset, range};
            writes[i].pBufferInfo = &infos[i];
        } else if (kind == 'u') {  // a few constants the host rewrites between steps
            if (range > lim.maxUniformBufferRange || r.offset % lim.minUniformBufferOffsetAlignment != 0)
                throw Error("internal error: uniform buffer of " + std::to_string(range) + " bytes at offset " +
                            std::to_string(r.offset) + " does not fit this GPU's limits, kernel " + k.name());
            infos[i] = {r.buffer->get(), r.offset, range};
            writes[i].pBufferInfo = &infos[i];
        } else {
            size_t texel = kind == 'v' ? 16 : 4;
            range -= range % texel;
            if (range == 0) range = texel;
            if (range / texel > lim.maxTexelBufferElements)
                throw Error("a tensor of " + std::to_string(range / 4) + " floats exceeds this GPU's texel-buffer limit: "
                            "use a smaller batch or block size");
            if (r.offset % lim.minTexelBufferOffsetAlignment != 0)
                throw Error("internal error: texel view offset not aligned for kernel " + k.name());
            VkBufferViewCreateInfo vi{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
            vi.buffer = r.buffer->get();
            vi.format = kind == 'v' ? VK_FORMAT_R32G32B32A32_SFLOAT : VK_FORMAT_R32_SFLOAT;
            vi.offset = r.offset;
            vi.range = range;
            VkDevice dev = m_ctx.device();
            VK_CHECK(vkCreateBufferView(dev, &vi, nullptr, &views[i]));
            m_views.emplace_back(views[i], [dev](VkBufferView h) { vkDestroyBufferView(dev, h, nullptr); });
            writes[i].pTexelBufferView = &views[i];
        }
        i++;
    }
    vkUpdateDescriptorSets(m_ctx.device(), i, writes, 0, nullptr);
    auto bind = [&](VkPipeline pipeline) {  // a new command buffer starts with nothing bound
        vkCmdBindPipeline(m_cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        vkCmdBindDescriptorSets(m_cb, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout(), 0, 1, &set, 0, nullptr);
        if (push_bytes) vkCmdPushConstants(m_cb, k.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, uint32_t(push_bytes), push);
    };
    uint64_t groups = (n + WORKGROUP - 1) / WORKGROUP;
    uint64_t max_x = m_ctx.props().limits.maxComputeWorkGroupCount[0];
    uint64_t gx = std::min(groups, max_x);
    uint64_t gy = (groups + gx - 1) / gx;
    if (cost <= 0) cost = double(n) * 8;
    // ATTNLAB_NARROW_TAIL=0: every workgroup of WORKGROUP (tests, benchmarks)
    uint64_t lanes = m_ctx.policy().narrow_tail ? m_ctx.cpu_simd_width() : 0, whole = n / WORKGROUP, tail = n % WORKGROUP;
    VkPipeline narrow = m_budget <= 0 && gy == 1 && tail > 0 ? k.narrow_pipeline(uint32_t(lanes)) : VK_NULL_HANDLE;
    if (narrow) {  // the whole workgroups, then the rest in workgroups of `lanes` (gl_GlobalInvocationID continues)
        if (whole > 0) {
            bind(k.pipeline());
            vkCmdDispatch(m_cb, uint32_t(whole), 1, 1);
            m_pieces++;
            vkCmdBindPipeline(m_cb, VK_PIPELINE_BIND_POINT_COMPUTE, narrow);  // the same layout: set and constants stay
        } else {
            bind(narrow);
        }
        vkCmdDispatchBase(m_cb, uint32_t(whole * (WORKGROUP / lanes)), 0, 0, uint32_t((tail + lanes - 1) / lanes), 1, 1);
        m_pieces++;
    } else if (m_budget <= 0) {
        bind(k.pipeline());
        vkCmdDispatch(m_cb, uint32_t(gx), uint32_t(gy), 1);
        m_pieces++;
    } else {
        // Split along y when the grid has several rows (gid() reads gl_NumWorkGroups.x, unchanged), along
        // x otherwise; vkCmdDispatchBase offsets gl_GlobalInvocationID, so the shaders need no change.
        // A piece is at least k_min_piece_groups workgroups (or what is left): lavapipe hands a dispatch's
        // workgroups to its threads in equal shares, so a piece of one workgroup (a big layer's dw tile over
        // every row costs more than a whole budget) would run on one core.
        uint64_t units = gy > 1 ? gy : gx;
        uint64_t min_units = gy > 1 ? 1 : k_min_piece_groups;
        double unit_cost = cost / double(units);
        bool bound = false;
        for (uint64_t u = 0; u < units;) {
            if (m_seg_cost > 0 && m_seg_cost + unit_cost > m_budget) {
                cut();
                bound = false;
            }
            if (!bound) bind(k.pipeline());
            bound = true;
            // compared as doubles: a budget of 1e30 ("one submit") overflows a 64-bit count
            double fit = std::max(0.0, (m_budget - m_seg_cost) / unit_cost);
            uint64_t c = fit >= double(units - u) ? units - u
                                                  : std::min(units - u, std::max<uint64_t>(min_units, uint64_t(fit)));
            if (gy > 1) vkCmdDispatchBase(m_cb, 0, uint32_t(u), 0, uint32_t(gx), uint32_t(c), 1);
            else vkCmdDispatchBase(m_cb, uint32_t(u), 0, 0, uint32_t(c), 1, 1);
            m_seg_cost += double(c) * unit_cost;
            m_pieces++;
            u += c;
        }
    }
    m_dispatches++;
    if (m_profile && m_names.size() < MAX_PROFILED) {
        m_names.push_back(k.name());
        vkCmdWriteTimestamp(m_cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, m_queries, uint32_t(1 + m_names.size()));
    }
}

void Program::barrier(const char* /*why*/) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                       VK_ACCESS_TRANSFER_WRITE_BIT;
    VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vkCmdPipelineBarrier(m_cb, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

void Program::copy(const Buffer& src, size_t src_off, const Buffer& dst, size_t dst_off, size_t bytes) {
    VkBufferCopy c{src_off, dst_off, bytes};
    vkCmdCopyBuffer(m_cb, src.get(), dst.get(), 1, &c);
}

void Program::fill_zero(const Buffer& dst, size_t offset, size_t bytes) {
    vkCmdFillBuffer(m_cb, dst.get(), offset, bytes ? bytes : VK_WHOLE_SIZE, 0);
}

void Program::end() {
    // The host reads results (loss, logits) after the fence: make device writes visible to it.
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(m_cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
    vkCmdWriteTimestamp(m_cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, m_queries, 1);
    VK_CHECK(vkEndCommandBuffer(m_cb));
    m_recorded = true;
}

double Program::run() {
    double ms = 0;
    run_unless({}, &ms);
    return ms;
}

bool Program::run_unless(const std::function<bool()>& stop, double* gpu_ms) {
    if (!m_recorded) throw Error("internal error: Program::run before end()");
    VkDevice dev = m_ctx.device();
    VkFence f = m_fence;
    if (gpu_ms) *gpu_ms = 0;
    // One submit per segment, each waited for before the next, holding the queue only to submit: other
    // threads' submits (the window's frames) run between segments. Barriers recorded in one segment order
    // the commands of the next ones too (synchronisation scopes follow submission order).
    for (size_t s = 0; s < m_used; s++) {
        if (s > 0 && stop && stop()) return false;
        {
            std::lock_guard lock(m_ctx.queue_mutex());
            VK_CHECK(vkResetFences(dev, 1, &f));
            VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
            si.commandBufferCount = 1;
            si.pCommandBuffers = &m_cbs[s];
            VK_CHECK(vkQueueSubmit(m_ctx.queue(), 1, &si, f));
        }
        VK_CHECK(vkWaitForFences(dev, 1, &f, VK_TRUE, UINT64_MAX));
    }
    // Reading the timestamps back costs lavapipe 70-80 us (vkGetQueryPoolResults; an empty submit and wait costs about
    // as much), a sixth of a lecture model's step: a profiled program reads them every run, the others when
    // k_time_every has passed since their last reading, and report that reading in between.
    auto now = std::chrono::steady_clock::now();
    m_timed_now = false;
    if (!m_profile && m_timed && now - m_timed_at < k_time_every) {
        if (gpu_ms) *gpu_ms = m_timed_ms;
        return true;
    }
    uint64_t ts[2] = {0, 0};
    VkResult r = vkGetQueryPoolResults(dev, m_queries, 0, 2, sizeof ts, ts, sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
    if (r != VK_SUCCESS) return true;
    if (m_profile && !m_names.empty()) {
        m_stamps.assign(m_names.size(), 0);
        vkGetQueryPoolResults(dev, m_queries, 2, uint32_t(m_names.size()), m_stamps.size() * 8, m_stamps.data(), 8,
                              VK_QUERY_RESULT_64_BIT);
        m_stamps.insert(m_stamps.begin(), ts[0]);
    }
    uint32_t valid = m_ctx.props().limits.timestampComputeAndGraphics ? 64 : 0;
    m_timed_ms = valid ? double(ts[1] - ts[0]) * m_ctx.props().limits.timestampPeriod * 1e-6 : 0;
    m_timed = m_timed_now = true;
    m_timed_at = now;
    if (gpu_ms) *gpu_ms = m_timed_ms;
    return true;
}

std::vector<std::pair<std::string, double>> Program::kernel_times() const {
    std::vector<std::pair<std::string, double>> out;
    double period = m_ctx.props().limits.timestampPeriod * 1e-6;
    for (size_t i = 0; i + 1 < m_stamps.size(); i++) out.emplace_back(m_names[i], double(m_stamps[i + 1] - m_stamps[i]) * period);
    return out;
}

}  // namespace attn
