// Samples panel: text from the current weights after an editable prompt, refreshed on a cost budget, with history.
#include <cstdio>
#include <string>
#include <imgui.h>
#include <imgui_stdlib.h>

#include "panels.h"
#include "text/bpe.h"

namespace attn {

static const ImVec4 k_scrubbed_colour(0.92f, 0.92f, 0.96f, 1.0f);

// Wrapped, not cut at the panel's edge: a long prompt and the characters left out of it stay readable.
static void sample_header(const SampleEntry& s) {
    std::string h = "step " + std::to_string(s.step);
    if (s.val_loss > 0) {
        char v[32];
        std::snprintf(v, sizeof v, " | val loss %.4f", s.val_loss);
        h += v;
    }
    if (!s.prompt.empty()) h += " | prompt: " + s.prompt;
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
    ImGui::TextWrapped("%s", h.c_str());
    ImGui::PopStyleColor();
    if (!s.left_out.empty()) {  // Dataset::encode skips them: say so rather than sample from another prompt silently
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.8f, 0.3f, 1));
        ImGui::TextWrapped("Not in the corpus, left out of the prompt: %s", s.left_out.c_str());
        ImGui::PopStyleColor();
    }
}

// A sample's text: wrapped characters, or for a run of BPE tokens each token in turn in one of two colours, so that
// their boundaries show (a newline in a token breaks the line; bytes that are no whole character read \xNN).
static void sample_text(const SampleEntry& s) {
    if (s.tokens.empty()) {
        ImGui::TextWrapped("%s", s.text.c_str());
        return;
    }
    static const ImU32 colours[2] = {IM_COL32(235, 235, 240, 255), IM_COL32(120, 185, 255, 255)};
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 start = ImGui::GetCursorScreenPos();
    const float right = start.x + ImGui::GetContentRegionAvail().x, line_h = ImGui::GetTextLineHeight();
    float x = start.x, y = start.y;
    for (size_t i = 0; i < s.tokens.size(); i++) {
        const std::string& t = s.tokens[i];
        for (size_t a = 0;;) {
            size_t nl = t.find('\n', a);
            std::string part = bytes_as_text(t.substr(a, nl == std::string::npos ? std::string::npos : nl - a));
            float w = ImGui::CalcTextSize(part.c_str()).x;
            if (x + w > right && x > start.x) x = start.x, y += line_h;  // wrapped before the token, never within
            dl->AddText(ImVec2(x, y), colours[i % 2], part.c_str());
            x += w;
            if (nl == std::string::npos) break;
            x = start.x, y += line_h, a = nl + 1;
        }
    }
    ImGui::Dummy(ImVec2(right - start.x, y + line_h - start.y));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%zu tokens, drawn in turn in two colours", s.tokens.size());
}

// The sample shown, for the layout sidecar (tests): its step and a hash of its text.
static void note_shown(PanelLayout& layout, const SampleEntry& s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s.text) h = (h ^ c) * 0x100000001b3ull;
    layout.samples_step = s.step;
    layout.samples_hash = h;
    layout.samples_tokens = int(s.tokens.size());
}

void draw_samples(SamplesState& st, const Snapshot& snap, TrainingThread& tt, PanelLayout& layout) {
    ImGui::SetNextItemWidth(260);
    if (ImGui::InputTextWithHint("prompt", "(empty: start from a newline)", &st.prompt)) tt.set_prompt(st.prompt);
    layout.prompt_field = visible_rect();
    ImGui::SameLine();
    ImGui::BeginDisabled(!snap.has_model || snap.fatal);
    if (ImGui::Button("Sample now")) tt.request_sample();
    ImGui::EndDisabled();
    // one wrapped line under the prompt: it stays readable however narrow the panel. What changes with every sample
    // (its cost, how often) is in the current sample's box: this line, drawn in the panel's own draw list, stays the
    // same, so the renderer's partial redraw (renderer.h) does not draw the whole panel again for each sample.
    char settings[96];
    std::snprintf(settings, sizeof settings, "Temperature %.2f, top-k %d, %d %s (Controls, Sampling and drawing).",
                  snap.cfg.temperature, snap.cfg.top_k, snap.cfg.sample_chars, snap.bpe_tokens ? "tokens" : "chars");
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
    ImGui::TextWrapped("%s Auto-refresh while training: sampling takes at most a twentieth of the time.", settings);
    ImGui::PopStyleColor();

    ImVec2 avail = ImGui::GetContentRegionAvail();
    float w_now = avail.x * 0.55f;
    ImGui::BeginChild("##current", ImVec2(w_now, avail.y), true);
    ImVec2 tl = ImGui::GetCursorScreenPos();
    ImVec2 fb = ImGui::GetIO().DisplayFramebufferScale;
    ImVec2 wp = ImGui::GetWindowPos(), ws = ImGui::GetWindowSize();
    if (st.at_step >= 0 && snap.scrubbed_sample.step >= 0) {
        // scrubbed: sampled from that step's weights, with the run's seed at every step
        ImGui::PushStyleColor(ImGuiCol_Text, k_scrubbed_colour);
        ImGui::TextWrapped("The time-lapse is at step %d: sampled from its weights with seed %llu, the same at every "
                           "step (Live in Attention returns to the latest)",
                           snap.scrubbed_sample.step, static_cast<unsigned long long>(snap.cfg.seed));
        ImGui::PopStyleColor();
        sample_header(snap.scrubbed_sample);
        tl = ImGui::GetCursorScreenPos();
        sample_text(snap.scrubbed_sample);
        note_shown(layout, snap.scrubbed_sample);
    } else if (snap.samples.empty()) {
        ImGui::TextDisabled("No sample yet.");
    } else {
        // while the time-lapse is scrubbed: the sample taken last at or before that step
        const SampleEntry* at = &snap.samples.back();
        if (st.at_step >= 0) {
            at = &snap.samples.front();
            for (const SampleEntry& e : snap.samples)
                if (e.step <= st.at_step) at = &e;
            ImGui::PushStyleColor(ImGuiCol_Text, k_scrubbed_colour);
            ImGui::TextWrapped("The time-lapse is at step %d: its sample (Live in Attention returns to the latest)",
                               st.at_step);
            ImGui::PopStyleColor();
        }
        const SampleEntry& s = *at;
        sample_header(s);
        if (snap.sample_ms > 0 && st.at_step < 0) {
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
            if (snap.sample_every_steps > 0)
                ImGui::TextWrapped("sampled in %.0f ms, refreshed every ~%d steps", snap.sample_ms, snap.sample_every_steps);
            else  // no step timed yet (a resumed or loaded run): the cadence comes with the first steps
                ImGui::TextWrapped("sampled in %.0f ms, refreshed while training", snap.sample_ms);
            ImGui::PopStyleColor();
        }
        tl = ImGui::GetCursorScreenPos();
        sample_text(s);
        note_shown(layout, s);
    }
    layout.samples_text = ImVec4(tl.x * fb.x, tl.y * fb.y, (wp.x + ws.x - tl.x - 8) * fb.x, (wp.y + ws.y - tl.y - 8) * fb.y);
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("##history", ImVec2(0, avail.y), true);
    ImGui::TextDisabled("Earlier (%d), newest first", snap.samples.empty() ? 0 : int(snap.samples.size()) - 1);
    for (int i = int(snap.samples.size()) - 2; i >= 0; i--) {
        ImGui::Separator();
        sample_header(snap.samples[i]);
        sample_text(snap.samples[i]);
    }
    ImGui::EndChild();
}

}  // namespace attn
