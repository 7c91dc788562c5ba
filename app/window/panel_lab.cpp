// Lab window: the eight self-attention demos (engine/lab), computed by compute shaders on the window's device.
// This file holds the window, its list of demos, the toggle button and the worker; the demos draw in panel_lab_*.cpp.
#include "panel_lab.h"

#include <imgui.h>
#include <imgui_internal.h>  // BringWindowToDisplayFront: the Lab floats above the fixed dashboard

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <utility>

#include "lab/lab_registry.h"
#include "panel_lab_internal.h"

namespace attn {

namespace {

// The small always-visible toggle at the top right of the main window.
void draw_toggle_button(LabState& st) {
    ImGuiViewport* vp = ImGui::GetMainViewport();
    const char* label = st.open ? "Close Lab (L)" : "Lab (L)";
    ImVec2 ts = ImGui::CalcTextSize(label);
    ImVec2 size(ts.x + ImGui::GetStyle().FramePadding.x * 2, ImGui::GetTextLineHeight() + 2);
    ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + vp->Size.x - size.x - 8, vp->Pos.y + 1), ImGuiCond_Always);
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
    ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(ImGui::GetStyle().FramePadding.x, 1));
    ImGuiWindowFlags fl = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoBackground | ImGuiWindowFlags_AlwaysAutoResize |
                          ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav |
                          ImGuiWindowFlags_NoMove;
    if (ImGui::Begin("##lab_toggle", nullptr, fl)) {
        if (!ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopup)) ImGui::BringWindowToDisplayFront(ImGui::GetCurrentWindow());
        if (ImGui::Button(label)) st.open = !st.open;
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("The self-attention lab: eight small demos (key L)");
    }
    ImGui::End();
    ImGui::PopStyleVar(2);
}

}  // namespace

// --- the worker ---

LabWorker::~LabWorker() {
    if (m_thread.joinable()) m_thread.join();
}

bool LabWorker::start(std::function<std::function<void()>()> task) {
    if (busy()) return false;
    m_finished = false;
    m_apply = nullptr;
    try {
        m_thread = std::thread([this, task = std::move(task)] {
            std::function<void()> apply = task();
            m_apply = std::move(apply);
            m_finished = true;  // after m_apply: collect() reads it once it sees this
        });
    } catch (const std::exception&) {
        return false;
    }
    return true;
}

void LabWorker::collect() {
    if (!m_thread.joinable() || !m_finished.load()) return;
    m_thread.join();
    std::function<void()> apply = std::move(m_apply);
    m_apply = nullptr;
    if (apply) apply();
}

// --- the window ---

void init_lab(LabState& st) {
    st.initialised = true;
    const char* want = std::getenv("ATTNLAB_LAB_DEMO");
    if (!want || !*want) return;
    st.open = true;
    const auto& list = lab::demos();
    for (size_t i = 0; i < list.size(); i++)
        if (list[i].name == want) {
            st.demo = int(i);
            return;
        }
    st.start_error = std::string("ATTNLAB_LAB_DEMO=") + want + " is not a demo; the demos are: " + lab::demo_names();
}

void draw_lab(LabState& st, Context& ctx, const Snapshot& snap, TrainingThread& tt) {
    if (!st.initialised) init_lab(st);
    draw_toggle_button(st);
    st.content_rect = ImVec4(0, 0, 0, 0);
    st.encoder_job.collect();  // a finished comparison is picked up even while another demo shows
    st.worker.collect();
    if (!st.open) return;
    ImGuiViewport* vp = ImGui::GetMainViewport();
    float W = vp->Size.x, H = vp->Size.y;
    float left = std::min(340.0f, W * 0.3f) + 12;  // beside the Controls column
    ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + left, vp->Pos.y + 26), ImGuiCond_Appearing);
    ImGui::SetNextWindowSize(ImVec2(std::max(300.0f, W - left - 12), std::max(200.0f, H - 70)), ImGuiCond_Appearing);
    ImGui::SetNextWindowSizeConstraints(ImVec2(300, 200), ImVec2(FLT_MAX, FLT_MAX));
    bool open = st.open;
    ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
    bg.w = 1.0f;  // opaque: the dashboard's text must not show through the demo
    ImGui::PushStyleColor(ImGuiCol_WindowBg, bg);
    bool visible = ImGui::Begin("Lab: self-attention, one idea at a time", &open, ImGuiWindowFlags_NoSavedSettings);
    ImGui::PopStyleColor();
    if (!visible) {
        ImGui::End();
        st.open = open;
        return;
    }
    st.open = open;
    // The dashboard panels fill the window; clicking them must not bury the Lab (popups stay on top).
    if (!ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopup)) ImGui::BringWindowToDisplayFront(ImGui::GetCurrentWindow());

    const auto& list = lab::demos();
    st.demo = std::clamp(st.demo, 0, int(list.size()) - 1);
    // the list of demos
    ImGui::BeginChild("##demos", ImVec2(150, 0), true);
    for (size_t i = 0; i < list.size(); i++) {
        char label[64];
        std::snprintf(label, sizeof label, "%zu  %s", i + 1, list[i].name.c_str());
        if (ImGui::Selectable(label, st.demo == int(i))) st.demo = int(i);
    }
    ImGui::Spacing();
    ImGui::Separator();
    ImGui::TextDisabled("Every number here");
    ImGui::TextDisabled("comes from compute");
    ImGui::TextDisabled("shaders on this");
    ImGui::TextDisabled("window's device.");
    if (st.worker.busy()) ImGui::TextDisabled("computing...");
    ImGui::EndChild();
    ImGui::SameLine();

    ImGui::BeginChild("##demo", ImVec2(0, 0), false);
    ImVec2 c0 = ImGui::GetWindowPos(), cs = ImGui::GetWindowSize();
    ImVec2 fb = ImGui::GetIO().DisplayFramebufferScale;
    st.content_rect = ImVec4(c0.x * fb.x, c0.y * fb.y, cs.x * fb.x, cs.y * fb.y);
    lab_ui::error_text(st.start_error);
    const lab::DemoInfo& info = list[size_t(st.demo)];
    ImGui::Text("%d. %s", st.demo + 1, info.title.c_str());
    ImGui::TextWrapped("%s", info.explanation.c_str());
    ImGui::Separator();
    if (!st.kc) {
        try {
            st.kc = std::make_unique<KernelCache>(ctx);
        } catch (const std::exception& e) {
            lab_ui::error_text(std::string("cannot prepare the compute kernels: ") + e.what());
        }
    }
    if (st.kc) {
        const std::string& name = info.name;
        if (name == "matmul") lab_ui::draw_matmul(st, ctx);
        else if (name == "average") lab_ui::draw_average(st, ctx);
        else if (name == "softmax") lab_ui::draw_softmax(st, ctx);
        else if (name == "scaling") lab_ui::draw_scaling(st, ctx);
        else if (name == "encoder") lab_ui::draw_encoder(st, ctx, snap, tt);
        else if (name == "position") lab_ui::draw_position(st, ctx);
        else if (name == "batches") lab_ui::draw_batches(st, ctx);
        else if (name == "graph") lab_ui::draw_graph(st, ctx);
    }
    ImGui::EndChild();
    ImGui::End();
}

std::string lab_layout_line(const LabState& st) {
    const ImVec4& r = st.content_rect;
    return "lab " + std::to_string(std::lround(r.x)) + ' ' + std::to_string(std::lround(r.y)) + ' ' +
           std::to_string(std::lround(r.z)) + ' ' + std::to_string(std::lround(r.w)) + '\n';
}

}  // namespace attn
