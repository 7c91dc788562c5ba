// Controls panel: run/pause/step/reset, live settings (applied at once) and model settings (Apply & restart).
#include <imgui.h>
#include <imgui_stdlib.h>

#include "panels.h"

namespace attn {

static const ImVec4 k_error_colour{1.0f, 0.45f, 0.4f, 1.0f};

// Shows every message for `flag` under the field it belongs to; returns whether there was one.
static bool field_error(const std::vector<ConfigError>& errs, const char* flag) {
    bool any = false;
    for (auto& e : errs)
        if (e.field == flag) {
            ImGui::PushStyleColor(ImGuiCol_Text, k_error_colour);
            ImGui::TextWrapped("%s", e.message.c_str());
            ImGui::PopStyleColor();
            any = true;
        }
    return any;
}

static void section(const char* title) {
    ImGui::Spacing();
    ImGui::TextDisabled("%s", title);
    ImGui::Separator();
}

// The live fields of `edit` on top of the running config: what set_live would get.
static Config live_candidate(const Config& running, const Config& edit) {
    Config c = running;
    c.lr = edit.lr;
    c.weight_decay = edit.weight_decay;
    c.batch_size = edit.batch_size;
    c.eval_interval = edit.eval_interval;
    c.eval_iters = edit.eval_iters;
    c.temperature = edit.temperature;
    c.top_k = edit.top_k;
    c.sample_chars = edit.sample_chars;
    c.max_iters = edit.max_iters;
    return c;
}

static bool restart_fields_differ(const Config& a, const Config& b) {
    return a.preset != b.preset || a.block_size != b.block_size || a.n_embd != b.n_embd || a.head_size != b.head_size ||
           a.n_head != b.n_head || a.n_layer != b.n_layer || a.seed != b.seed;
}

bool draw_controls(ControlsState& st, const Snapshot& snap, TrainingThread& tt) {
    if (!st.initialised && snap.version > 0) {
        st.edit = snap.cfg;
        st.corpus_path = snap.corpus_path;
        st.initialised = true;
    }
    bool screenshot = false;
    ImGui::PushItemWidth(ImGui::GetContentRegionAvail().x * 0.45f);

    // --- run ---
    ImGui::BeginDisabled(!snap.has_model || snap.fatal);
    if (ImGui::Button(snap.running ? "Pause (Space)" : "Start (Space)", ImVec2(120, 0))) tt.set_running(!snap.running);
    ImGui::SameLine();
    if (ImGui::Button("Step once (S)")) tt.step_once();
    ImGui::SameLine();
    if (ImGui::Button("Reset (R)")) tt.reset();
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("New random weights with the same settings: the loss history and samples are cleared.");
    if (ImGui::Button("Screenshot (F12)")) screenshot = true;
    // Always one line, so the fields below do not jump while the thread is busy.
    ImGui::TextDisabled("%s%s", snap.busy.c_str(), snap.busy.empty() ? "" : "...");

    // --- live ---
    section("Live (applied at once)");
    Config& e = st.edit;
    bool changed = false;
    Config cand = live_candidate(snap.cfg, e);
    auto errs = validate(cand);
    changed |= ImGui::InputFloat("learning rate", &e.lr, 0, 0, "%.6g");
    field_error(errs, "--lr");
    changed |= ImGui::InputFloat("weight decay", &e.weight_decay, 0, 0, "%.4g");
    field_error(errs, "--weight-decay");
    changed |= ImGui::InputInt("batch size", &e.batch_size);
    field_error(errs, "--batch-size");
    changed |= ImGui::InputInt("eval interval", &e.eval_interval);
    field_error(errs, "--eval-interval");
    changed |= ImGui::InputInt("eval iters", &e.eval_iters);
    field_error(errs, "--eval-iters");
    changed |= ImGui::InputInt("max iters", &e.max_iters, 100, 1000);
    field_error(errs, "--max-iters");
    changed |= ImGui::InputFloat("temperature", &e.temperature, 0.1f, 0.5f, "%.2f");
    field_error(errs, "--temperature");
    changed |= ImGui::InputInt("top-k", &e.top_k);
    field_error(errs, "--top-k");
    changed |= ImGui::InputInt("sample length", &e.sample_chars, 50, 500);
    field_error(errs, "--sample-chars");
    ImGui::InputInt("fps cap", &st.fps_cap);
    if (st.fps_cap < 1 || st.fps_cap > 240) {
        ImGui::PushStyleColor(ImGuiCol_Text, k_error_colour);
        ImGui::TextWrapped("fps cap must be between 1 and 240 (got %d); kept at the last valid value", st.fps_cap);
        ImGui::PopStyleColor();
    }
    if (changed) {
        cand = live_candidate(snap.cfg, e);
        if (validate(cand).empty()) tt.set_live(cand);
    }

    // --- restart ---
    section("Model (Apply & restart)");
    if (ImGui::BeginCombo("preset", e.preset.c_str())) {
        for (const std::string& name : Config::preset_names())
            if (ImGui::Selectable(name.c_str(), name == e.preset)) e.apply_preset(name);  // the lecture's settings
        ImGui::EndCombo();
    }
    ImGui::InputInt("block size (T)", &e.block_size);
    auto rerrs = validate(e);
    field_error(rerrs, "--block-size");
    ImGui::BeginDisabled(e.kind == ModelKind::Bigram);
    ImGui::InputInt("n_embd (C)", &e.n_embd);
    field_error(rerrs, "--n-embd");
    ImGui::InputInt("n_head", &e.n_head);
    field_error(rerrs, "--n-head");
    ImGui::InputInt("head size", &e.head_size);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("0: n_embd / n_head");
    field_error(rerrs, "--head-size");
    ImGui::InputInt("n_layer", &e.n_layer);
    field_error(rerrs, "--n-layer");
    ImGui::EndDisabled();
    ImGui::InputScalar("seed", ImGuiDataType_U64, &e.seed);
    ImGui::PushItemWidth(-1);
    ImGui::TextUnformatted("corpus (UTF-8 text file)");
    ImGui::InputText("##corpus", &st.corpus_path);
    ImGui::PopItemWidth();
    if (!snap.restart_error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, k_error_colour);
        ImGui::TextWrapped("Not applied: %s", snap.restart_error.c_str());
        ImGui::PopStyleColor();
    }
    bool pending = restart_fields_differ(e, snap.cfg) || st.corpus_path != snap.corpus_path;
    ImGui::BeginDisabled(!rerrs.empty() || snap.fatal);
    if (ImGui::Button("Apply & restart")) tt.restart(e, st.corpus_path);
    ImGui::EndDisabled();
    ImGui::TextWrapped("%sRestarting loses the current weights, all %d steps, the loss history and the samples.",
                       pending ? "Changed. " : "", snap.step);
    if (!rerrs.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, k_error_colour);
        ImGui::TextWrapped("Fix the fields marked above to apply.");
        ImGui::PopStyleColor();
    }
    ImGui::PopItemWidth();
    if (!snap.message.empty()) {
        ImGui::Separator();
        ImGui::TextWrapped("%s", snap.message.c_str());
    }
    return screenshot;
}

}  // namespace attn
