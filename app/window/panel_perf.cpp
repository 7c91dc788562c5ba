// Performance panel: per-kernel GPU time per step (bar chart), step time, eval/sampling share of wall time, GPU memory.
#include <imgui.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "panels.h"
#include "train/trainer.h"

namespace attn {

static const ImU32 k_bar_colour = IM_COL32(90, 165, 255, 255);
static const ImU32 k_bar_bg = IM_COL32(40, 40, 48, 255);

// 725774 -> "726k", 1.2e6 -> "1.2M": the summary line stays short.
static std::string compact_count(double v) {
    char buf[32];
    if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.1fM", v / 1e6);
    else if (v >= 1e4) std::snprintf(buf, sizeof buf, "%.0fk", v / 1e3);
    else std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
}

static std::string mib(size_t n) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f MiB", n / (1024.0 * 1024.0));
    return buf;
}

// Greyed text wrapped at the panel's edge (a narrow window would cut these lines off).
static void disabled_wrapped(const char* fmt, ...) IM_FMTARGS(1);
static void disabled_wrapped(const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
    ImGui::TextWrappedV(fmt, args);
    ImGui::PopStyleColor();
    va_end(args);
}

// One labelled horizontal bar: `frac` of the row filled, label on the left, value on the right.
static void bar_row(ImDrawList* dl, const char* label, const char* value, float frac, float w, ImU32 col) {
    ImVec2 p = ImGui::GetCursorScreenPos();
    float h = ImGui::GetTextLineHeight(), label_w = std::min(190.0f, w * 0.5f), value_w = 66;
    float bx0 = p.x + label_w, bx1 = p.x + std::max(label_w + 10, w - value_w);
    dl->AddRectFilled(ImVec2(bx0, p.y + 2), ImVec2(bx1, p.y + h - 1), k_bar_bg);
    dl->AddRectFilled(ImVec2(bx0, p.y + 2), ImVec2(bx0 + (bx1 - bx0) * std::clamp(frac, 0.0f, 1.0f), p.y + h - 1), col);
    dl->PushClipRect(p, ImVec2(bx0 - 4, p.y + h), true);
    dl->AddText(p, IM_COL32(210, 210, 220, 255), label);
    dl->PopClipRect();
    dl->AddText(ImVec2(bx1 + 4, p.y), IM_COL32(210, 210, 220, 255), value);
    ImGui::Dummy(ImVec2(w, h + 1));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s: %s", label, value);
}

void draw_perf(PerfState& st, const Snapshot& snap, TrainingThread& tt) {
    if (!st.told) {
        tt.set_profiling(st.profiling);
        st.told = true;
    }
    // One summary line a learner reads first; the engine detail (shares, kernels, memory) folds open below.
    if (snap.has_model) {
        ImGui::Text("%.2f ms/step | %s tokens/s", snap.ms_per_step, compact_count(snap.tokens_per_s).c_str());
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Time per training step (smoothed) and tokens trained per second (batch x block / step time)");
        ImGui::TextDisabled("GPU memory %s", mib(snap.gpu_bytes).c_str());
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("What training takes: parameters, gradients, AdamW moments, activations");
    }
    st.details = ImGui::CollapsingHeader("Details (time, kernels)");
    if (!st.details) {
        if (st.cpu_one_thread && snap.has_model && st.pool_model)
            ImGui::TextColored(ImVec4(1, 0.8f, 0.3f, 1), "1 CPU thread: restart with --cpu-threads 2");
        return;
    }
    if (ImGui::Checkbox("profile kernels", &st.profiling)) tt.set_profiling(st.profiling);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("About two training steps a second run with a GPU timestamp after every dispatch (every step would cost "
                          "a small model ~40%% on a CPU driver).");
    std::string mem = "GPU memory " + mib(snap.gpu_bytes);
    same_line_if_fits(ImGui::CalcTextSize(mem.c_str()).x);
    ImGui::TextDisabled("%s", mem.c_str());
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Training: parameters, gradients, AdamW moments and one batch of activations "
                          "(Model::bytes_needed) plus the corpus tokens.\nAll device allocations (window included): %s",
                          mib(snap.device_bytes).c_str());
    std::string tl = "time-lapse " + mib(snap.timelapse_bytes) +
                     (snap.timelapse_storage.empty() ? "" : " (" + snap.timelapse_storage + ")");
    same_line_if_fits(ImGui::CalcTextSize(tl.c_str()).x);
    ImGui::TextDisabled("%s", tl.c_str());
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("The attention time-lapse in host memory, saved with every checkpoint: %d recorded steps, each "
                          "the model's weights (%s of them; fp32 while the run's steps fit the budget, else bf16) and the "
                          "probe's views (every head's attention in fp16, the per-character loss, the top-5 "
                          "predictions); past its budget of %s (--history-mib) steps are thinned, the first and last kept.",
                          snap.timelapse_snapshots, mib(snap.timelapse_weight_bytes).c_str(),
                          mib(snap.timelapse_budget).c_str());
    if (st.cpu_one_thread) {
        // a model built later that is big enough for the driver's thread pool says so (decided once a model)
        if (snap.has_model && st.pool_model_id != snap.model_id) {
            st.pool_model_id = snap.model_id;
            st.pool_model = Trainer::cpu_threads_for(snap.cfg, snap.vocab) != 1;
        }
        if (snap.has_model && st.pool_model)
            ImGui::TextColored(ImVec4(1, 0.8f, 0.3f, 1), "1 CPU thread: restart with --cpu-threads 2");
        else if (snap.has_model && snap.replicas > 1)
            disabled_wrapped("CPU driver: 1 thread a dispatch, %d devices a step", snap.replicas);
        else
            disabled_wrapped("CPU driver: 1 thread a dispatch");
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Every dispatch runs on one thread, without the driver's thread pool: chosen for the model "
                              "the app started with, fastest for small models (many tiny dispatches a step). It stays "
                              "for models built later; for a big one start with --cpu-threads 2.\nThe other cores train "
                              "too: each step is split over one device per core (replicas, --replicas), each a slice of "
                              "the batch, the gradients averaged on every device before AdamW. The kernel times below "
                              "are the first device's, with its slice.");
    }
    if (!snap.has_model) {
        ImGui::TextDisabled("No model yet.");
        return;
    }
    PerfState::Shown& s = st.shown;
    if (st.readout.due(readout_state(snap, 0)))
        s = {snap.ms_per_step, snap.gpu_ms, st.build_ms, st.render_ms, snap.train_s, snap.eval_s, snap.sample_s, snap.wall_s};
    double host_ms = std::max(0.0, s.ms_per_step - s.gpu_ms);
    ImGui::TextWrapped("step %.2f ms wall | GPU %.2f ms | host %.2f ms", s.ms_per_step, s.gpu_ms, host_ms);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("wall: the thread's time per step (smoothed); GPU: timestamps around the step; host: the rest "
                          "(recording, submission, waiting, reading the loss)");
    ImGui::TextWrapped("UI frame: panels %.2f ms | draw + present %.2f ms", s.build_ms, s.render_ms);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("The window's own cost per frame; drawing runs on a device of its own, but on a CPU "
                          "driver it shares the CPU with training");
    double wall = s.wall_s > 0 ? s.wall_s : 1;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    float w = ImGui::GetContentRegionAvail().x;
    char val[48];
    std::snprintf(val, sizeof val, "%.0f%%", 100 * s.train_s / wall);
    bar_row(dl, "training", val, float(s.train_s / wall), w, IM_COL32(90, 200, 120, 255));
    std::snprintf(val, sizeof val, "%.0f%%", 100 * s.eval_s / wall);
    bar_row(dl, "evaluation", val, float(s.eval_s / wall), w, IM_COL32(255, 150, 50, 255));
    std::snprintf(val, sizeof val, "%.0f%%", 100 * s.sample_s / wall);
    bar_row(dl, "sampling", val, float(s.sample_s / wall), w, IM_COL32(200, 120, 255, 255));
    disabled_wrapped("share of the %.1f s since the model was built, pauses left out", s.wall_s);

    ImGui::Separator();
    if (!snap.profiling) {
        ImGui::TextDisabled("Kernel profiling is off.");
        return;
    }
    if (snap.kernel_times.empty()) {
        ImGui::TextDisabled("Waiting for a profiled step...");
        return;
    }
    double total = 0;
    for (auto& k : snap.kernel_times) total += k.ms;
    double top = snap.kernel_times.front().ms;
    disabled_wrapped("GPU ms/step by kernel: %.2f ms (profiled steps)", total);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Summed over every dispatch of a kernel in one step (xN: N dispatches), mean of the last %d "
                          "profiled steps (about two a second).\nA profiled step waits for a timestamp after every "
                          "dispatch, so its total is longer than the GPU time of an ordinary step above.",
                          snap.kernel_steps);
    ImGui::BeginChild("##kernels", ImVec2(0, 0), false);
    float cw = ImGui::GetContentRegionAvail().x;
    for (auto& k : snap.kernel_times) {
        std::snprintf(val, sizeof val, "%.3f ms", k.ms);
        std::string label = k.count > 1 ? k.name + " x" + std::to_string(k.count) : k.name;
        bar_row(ImGui::GetWindowDrawList(), label.c_str(), val, top > 0 ? float(k.ms / top) : 0, cw, k_bar_colour);
    }
    ImGui::EndChild();
}

}  // namespace attn
