// Samples panel: text from the current weights after an editable prompt, refreshed on a cost budget, with history.
#include <cstdio>
#include <imgui.h>
#include <imgui_stdlib.h>

#include "panels.h"

namespace attn {

static void sample_header(const SampleEntry& s) {
    if (s.val_loss > 0)
        ImGui::TextDisabled("step %d | val loss %.4f%s%s", s.step, s.val_loss, s.prompt.empty() ? "" : " | prompt: ",
                            s.prompt.c_str());
    else
        ImGui::TextDisabled("step %d%s%s", s.step, s.prompt.empty() ? "" : " | prompt: ", s.prompt.c_str());
}

void draw_samples(SamplesState& st, const Snapshot& snap, TrainingThread& tt, PanelLayout& layout) {
    ImGui::SetNextItemWidth(260);
    if (ImGui::InputTextWithHint("prompt", "(empty: start from a newline)", &st.prompt)) tt.set_prompt(st.prompt);
    ImGui::SameLine();
    ImGui::BeginDisabled(!snap.has_model || snap.fatal);
    if (ImGui::Button("Sample now")) tt.request_sample();
    ImGui::EndDisabled();
    // one wrapped line under the prompt: it stays readable however narrow the panel
    char settings[96], refresh[160];
    std::snprintf(settings, sizeof settings, "Temperature %.2f, top-k %d, %d chars (set in Controls).", snap.cfg.temperature,
                  snap.cfg.top_k, snap.cfg.sample_chars);
    if (snap.sample_ms > 0)
        std::snprintf(refresh, sizeof refresh,
                      "Auto-refresh every ~%d steps while training: sampling (%.0f ms) takes at most a tenth of the time.",
                      snap.sample_every_steps, snap.sample_ms);
    else
        std::snprintf(refresh, sizeof refresh, "Auto-refresh while training: sampling takes at most a tenth of the time.");
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
    ImGui::TextWrapped("%s %s", settings, refresh);
    ImGui::PopStyleColor();

    ImVec2 avail = ImGui::GetContentRegionAvail();
    float w_now = avail.x * 0.55f;
    ImGui::BeginChild("##current", ImVec2(w_now, avail.y), true);
    ImVec2 tl = ImGui::GetCursorScreenPos();
    ImVec2 fb = ImGui::GetIO().DisplayFramebufferScale;
    ImVec2 wp = ImGui::GetWindowPos(), ws = ImGui::GetWindowSize();
    if (snap.samples.empty()) {
        ImGui::TextDisabled("No sample yet.");
    } else {
        const SampleEntry& s = snap.samples.back();
        sample_header(s);
        tl = ImGui::GetCursorScreenPos();
        ImGui::TextWrapped("%s", s.text.c_str());
    }
    layout.samples_text = ImVec4(tl.x * fb.x, tl.y * fb.y, (wp.x + ws.x - tl.x - 8) * fb.x, (wp.y + ws.y - tl.y - 8) * fb.y);
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("##history", ImVec2(0, avail.y), true);
    ImGui::TextDisabled("Earlier (%d), newest first", snap.samples.empty() ? 0 : int(snap.samples.size()) - 1);
    for (int i = int(snap.samples.size()) - 2; i >= 0; i--) {
        ImGui::Separator();
        sample_header(snap.samples[i]);
        ImGui::TextWrapped("%s", snap.samples[i].text.c_str());
    }
    ImGui::EndChild();
}

}  // namespace attn
