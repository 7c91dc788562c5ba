// Controls panel: run/pause/step/reset, live settings (applied at once) and model settings (Apply & restart).
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

#include "panels.h"

namespace attn {

static const ImVec4 k_error_colour{1.0f, 0.45f, 0.4f, 1.0f};

// Shows every message for `flag` under the field it belongs to; returns whether there was one.
// A field's error in the window's words: the message validate() writes for the command line names the flag
// ("--lr must be ..."); here it names the field as it is labelled ("learning rate must be ...").
static std::string in_window_words(const std::string& message) {
    static const std::pair<const char*, const char*> words[] = {
        {"--lr", "learning rate"}, {"--weight-decay", "weight decay"}, {"--batch-size", "batch size"},
        {"--eval-interval", "eval interval"}, {"--eval-iters", "eval iters"}, {"--max-iters", "max iters"},
        {"--temperature", "temperature"}, {"--top-k", "top-k"}, {"--sample-chars", "sample length"},
        {"--dropout", "dropout"}, {"--block-size", "block size"}, {"--n-embd", "n_embd"}, {"--n-head", "n_head"},
        {"--head-size", "head size"}, {"--n-layer", "n_layer"}, {"with --data FILE", "in the corpus field"}};
    std::string out = message;
    for (const auto& [flag, label] : words)
        for (size_t at = out.find(flag); at != std::string::npos; at = out.find(flag, at)) {
            size_t end = at + std::strlen(flag);
            if (end < out.size() && (std::isalnum(static_cast<unsigned char>(out[end])) || out[end] == '-')) {
                at = end;  // a longer flag (--eval-iters inside --eval-iters-x): not this one
                continue;
            }
            out.replace(at, end - at, label);
            at += std::strlen(label);
        }
    return out;
}

static bool field_error(const std::vector<ConfigError>& errs, const char* flag) {
    bool any = false;
    for (auto& e : errs)
        if (e.field == flag) {
            ImGui::PushStyleColor(ImGuiCol_Text, k_error_colour);
            ImGui::TextWrapped("%s", in_window_words(e.message).c_str());
            ImGui::PopStyleColor();
            any = true;
        }
    return any;
}

// A section that folds (its header a click); returns whether it is open.
static bool section(const char* title, bool open_by_default) {
    return ImGui::CollapsingHeader(title, open_by_default ? ImGuiTreeNodeFlags_DefaultOpen : 0);
}

// Paused at max iters: Start offers more steps rather than training on with no limit.
static bool finished_here(const Snapshot& snap) {
    return snap.has_model && !snap.running && !snap.fatal && snap.step >= snap.cfg.max_iters;
}

void controls_start_pause(ControlsState& st, const Snapshot& snap, TrainingThread& tt) {
    if (finished_here(snap)) {
        Config c = snap.cfg;
        c.max_iters = snap.step + more_steps(snap.cfg);
        st.edit.max_iters = c.max_iters;
        tt.set_live(c);
        tt.set_running(true);
        return;
    }
    tt.toggle_running();  // the thread's own state: two presses within one frame pause and start again
}

// The live fields of `edit` on top of the running config: what set_live would get.
static Config live_candidate(const Config& running, const Config& edit) { return with_live_fields(running, edit); }

static bool restart_fields_differ(const Config& a, const Config& b) {
    return a.preset != b.preset || a.block_size != b.block_size || a.n_embd != b.n_embd || a.hs() != b.hs() ||
           a.n_head != b.n_head || a.n_layer != b.n_layer || a.seed != b.seed || a.kind != b.kind || a.ffn != b.ffn ||
           (a.ffn && a.gelu != b.gelu) || (a.ffn && a.gelu && a.gelu_tanh != b.gelu_tanh) ||
           a.residual != b.residual || a.layernorm != b.layernorm || a.use_pos != b.use_pos ||
           a.nanogpt != b.nanogpt || (a.nanogpt && a.bias != b.bias);
}

void controls_save(ControlsState& st, TrainingThread& tt) { tt.save_checkpoint_to(st.ckpt_path); }
void controls_load(ControlsState& st, TrainingThread& tt) { tt.load_checkpoint_from(st.ckpt_path); }

void controls_reset(ControlsState& st, const Snapshot& snap, TrainingThread& tt) {
    if (snap.step > 0) st.confirm_reset_step = snap.step;
    else tt.reset();
}
void reset_answer(ControlsState& st, TrainingThread& tt, bool reset) {
    if (reset) tt.reset();
    st.confirm_reset_step = -1;
}
void begin_prompt(const char* title) {
    ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(ImVec2(vp->Size.x * 0.5f, vp->Size.y * 0.3f), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowBgAlpha(1.0f);  // over the panels, which draw no background
    ImGui::Begin(title, nullptr,
                 ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoMove);
}

// Like the resume prompt, never modal: training goes on underneath until the user picks.
void draw_reset_prompt(ControlsState& st, TrainingThread& tt) {
    if (st.confirm_reset_step < 0) return;
    begin_prompt("Reset?");
    ImGui::Text("Start again from new random weights?");
    ImGui::TextDisabled("The run's %d steps are lost unless saved first (Ctrl+S).", st.confirm_reset_step);
    if (ImGui::Button("Reset (Enter)")) reset_answer(st, tt, true);
    ImGui::SameLine();
    if (ImGui::Button("Cancel (Esc)")) reset_answer(st, tt, false);
    ImGui::End();
}

// (x, y, w, h) of the box a..b of the current window, all 0 when it is (partly) scrolled out of view
static ImVec4 rect_if_visible(ImVec2 a, ImVec2 b) {
    ImVec2 clip_a = ImGui::GetWindowDrawList()->GetClipRectMin(), clip_b = ImGui::GetWindowDrawList()->GetClipRectMax();
    if (a.y < clip_a.y || b.y > clip_b.y) return {};  // partly hidden: not a place to click
    return {a.x, a.y, b.x - a.x, b.y - a.y};
}

ImVec4 visible_rect() {
    if (!ImGui::IsItemVisible()) return {};
    return rect_if_visible(ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
}

bool draw_controls(ControlsState& st, const Snapshot& snap, TrainingThread& tt, PanelLayout& layout) {
    if (!st.initialised && snap.version > 0) {
        st.edit = snap.cfg;
        st.corpus_path = snap.corpus_path;
        st.initialised = true;
        st.model_id = snap.model_id;
    }
    if (snap.model_id != st.model_id) {  // a rebuild (a loaded checkpoint's config too): the fields show it
        st.edit = snap.cfg;
        st.model_id = snap.model_id;
        st.preset_live_set = false;
        st.live_dirty = false;
    }
    bool screenshot = false;
    // --- run: always in view; the sections below scroll (if they must) and fold ---
    ImGui::BeginDisabled(!snap.has_model || snap.fatal);
    const char* run_label = snap.running ? "Pause (Space)" : "Start (Space)";
    char more_label[48];
    if (finished_here(snap)) {
        std::snprintf(more_label, sizeof more_label, "+%d steps (Space)", more_steps(snap.cfg));
        run_label = more_label;
    }
    if (ImGui::Button(run_label, ImVec2(std::max(120.0f, ImGui::CalcTextSize(run_label).x + 12), 0)))
        controls_start_pause(st, snap, tt);
    layout.start_button = visible_rect();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip(finished_here(snap) ? "The run reached max iters: train this many steps more"
                                              : "A new model (launch, Reset, Apply & restart) trains at once; a loaded "
                                                "checkpoint waits here");
    ImGui::SameLine();
    if (ImGui::Button("Step once (S)")) tt.step_once();
    ImGui::SameLine();
    if (ImGui::Button("Reset (R)")) controls_reset(st, snap, tt);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("New random weights with the same settings, training at once: the loss history and samples "
                          "are cleared.");
    if (ImGui::Button("Screenshot (F12)")) screenshot = true;
    // slow motion: at most this many steps a second, to watch attention form live (0: full speed)
    same_line_if_fits(labelled_width(70, "steps/s cap"));
    ImGui::SetNextItemWidth(70);
    if (ImGui::InputFloat("steps/s cap", &st.max_steps_per_s, 0, 0, "%.3g", ImGuiInputTextFlags_EnterReturnsTrue) ||
        ImGui::IsItemDeactivatedAfterEdit()) {
        if (!(st.max_steps_per_s >= 0)) st.max_steps_per_s = 0;  // negative or NaN: full speed
        st.max_steps_per_s = std::min(st.max_steps_per_s, 1000.0f);
        tt.set_max_steps_per_s(st.max_steps_per_s);
    }
    layout.steps_cap_field = visible_rect();  // the field alone, without its label (a click there types)
    layout.steps_cap_field.z = std::min(layout.steps_cap_field.z, 70 * ImGui::GetIO().DisplayFramebufferScale.x);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Slow motion: train at most this many steps a second, to watch the heatmap and the loss "
                          "change step by step (0: full speed)");
    ImGui::BeginChild("##controls_body", ImVec2(0, 0), false);
    // Fields as wide as the longest label leaves room for, 45% of the panel at least: in a narrow window the labels
    // are cut at the panel's edge, not the numbers (a max iters of 5000 must not read 500)
    {
        float avail = ImGui::GetContentRegionAvail().x;
        const ImGuiStyle& style = ImGui::GetStyle();
        float label = ImGui::CalcTextSize("head size (0: 128)").x + style.ItemInnerSpacing.x;
        // an InputInt: its - and + buttons and seven digits
        float digits = 2 * (ImGui::GetFrameHeight() + style.ItemInnerSpacing.x) + ImGui::CalcTextSize("0000000").x +
                       2 * style.FramePadding.x;
        float w = std::max({avail * 0.45f, std::min(avail - label, 170.0f), digits});
        ImGui::PushItemWidth(std::min(w, avail));
    }

    layout.controls_widgets = 0;
    layout.controls_hidden.clear();
    auto track = [&](const char* name) {  // every widget below, for the layout sidecar: is it in view?
        layout.controls_widgets++;
        if (visible_rect().z <= 0) layout.controls_hidden.push_back(name);
    };
    // Always one line, so the fields below do not jump while the thread is busy.
    ImGui::TextDisabled("%s%s", snap.busy.c_str(), snap.busy.empty() ? "" : "...");
    if (!snap.heavy_note.empty()) {  // the gpt preset on a CPU driver, n_embd 33: why a step takes so long
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.8f, 0.3f, 1));
        ImGui::TextWrapped("%s", snap.heavy_note.c_str());
        ImGui::PopStyleColor();
    }
    if (snap.diverged) {
        ImGui::PushStyleColor(ImGuiCol_Text, k_error_colour);
        ImGui::TextWrapped("The loss became NaN/Inf at step %d: learning rate %g is probably too high.", snap.diverged_step,
                           double(snap.diverged_lr));
        ImGui::PopStyleColor();
        if (snap.good_step >= 0) {
            char label[64];
            std::snprintf(label, sizeof label, "Revert to step %d (Ctrl+Z)", snap.good_step);
            if (ImGui::Button(label)) tt.revert_to_good();
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("The last good state, kept in memory every 100 steps. Stays paused: lower the learning "
                                  "rate below, then Start.");
        } else {
            ImGui::TextWrapped(snap.keeps_good_state ? "No good state kept yet: lower the learning rate and press Reset."
                                                     : "The model has 50M+ parameters, so no good state is kept in memory "
                                                       "to revert to: lower the learning rate and press Reset.");
        }
    }

    // --- live ---
    bool live_open = section("Training (applied at once)", true);
    Config& e = st.edit;
    // The mask and dropout follow the running config unless being edited here: the Lab's encoder toggle changes
    // the mask too, and the next live change must not turn it back.
    if (st.live_waiting && ((snap.cfg.causal == st.live_sent.causal && snap.cfg.dropout == st.live_sent.dropout) ||
                            ImGui::GetTime() - st.live_sent_at > 2.0))
        st.live_waiting = false;
    if (!st.live_waiting && snap.has_model) {
        e.causal = snap.cfg.causal;
        if (!st.dropout_active) e.dropout = snap.cfg.dropout;
    }
    bool changed = false, typing = false;  // typing: a field still being typed into (applied when left)
    Config cand = live_candidate(snap.cfg, e);
    auto errs = validate(cand);
    auto field = [&](bool edited, const char* flag) {
        track(flag);
        changed |= edited;
        typing |= ImGui::IsItemActive();
        field_error(errs, flag);
    };
    if (live_open) {
        bool lr_edited = ImGui::InputFloat("learning rate", &e.lr, 0, 0, "%.6g");
        layout.lr_field = visible_rect();
        field(lr_edited, "--lr");
        field(ImGui::InputFloat("weight decay", &e.weight_decay, 0, 0, "%.4g"), "--weight-decay");
        if (snap.cfg.nanogpt) {  // nanoGPT's optimiser knobs (the flags work for any model; shown where they are used)
            field(ImGui::InputFloat("beta2", &e.beta2, 0, 0, "%.4g"), "--beta2");
            field(ImGui::InputFloat("grad clip", &e.grad_clip, 0, 0, "%.4g"), "--grad-clip");
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("The gradient is scaled down to this norm when longer; 0: off");
        }
        bool batch_edited = ImGui::InputInt("batch size", &e.batch_size);
        layout.batch_field = visible_rect();
        field(batch_edited, "--batch-size");
        field(ImGui::InputInt("eval interval", &e.eval_interval), "--eval-interval");
        field(ImGui::InputInt("eval iters", &e.eval_iters), "--eval-iters");
        field(ImGui::InputInt("max iters", &e.max_iters, 100, 1000), "--max-iters");
        ImGui::BeginDisabled(snap.cfg.kind == ModelKind::Bigram);
        changed |= ImGui::SliderFloat("dropout", &e.dropout, 0.0f, 0.9f, "%.2f");
        st.dropout_active = ImGui::IsItemActive();
        track("dropout");
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("On attention weights and both residual branches, training steps only (the lecture's 0.2)");
        field_error(errs, "--dropout");
        changed |= ImGui::Checkbox("causal mask", &e.causal);
        track("causal mask");
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Off: an encoder, every position also sees the future (the loss then drops by cheating)");
        ImGui::EndDisabled();
    } else {
        layout.batch_field = layout.lr_field = {};
    }
    if (section("Sampling and drawing", false)) {
        field(ImGui::InputFloat("temperature", &e.temperature, 0.1f, 0.5f, "%.2f"), "--temperature");
        field(ImGui::InputInt("top-k", &e.top_k), "--top-k");
        field(ImGui::InputInt("sample length", &e.sample_chars, 50, 500), "--sample-chars");
        ImGui::InputInt("fps cap", &st.fps_cap);
        track("fps cap");
        ImGui::Checkbox("save CPU while unwatched", &st.save_cpu);
        track("save CPU");
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("While training and nobody touches the window, draw only as often as keeps drawing under "
                              "15%% of the time (software Vulkan draws on the same CPU cores that train). Any input "
                              "brings the full frame rate back.");
    }
    if (st.fps_cap < 1 || st.fps_cap > 240) {
        ImGui::PushStyleColor(ImGuiCol_Text, k_error_colour);
        ImGui::TextWrapped("fps cap must be between 1 and 240 (got %d); kept at the last valid value", st.fps_cap);
        ImGui::PopStyleColor();
    }
    // the slider and the checkbox apply as they move; a number field once it is left
    if (changed && typing) st.live_dirty = true;
    if ((changed && !typing) || (st.live_dirty && !typing)) {
        st.live_dirty = false;
        cand = live_candidate(snap.cfg, e);
        if (validate(cand).empty()) {
            tt.set_live(cand);
            st.live_waiting = true;
            st.live_sent_at = ImGui::GetTime();
            st.live_sent = cand;
        }
    }

    // --- checkpoints ---
    if (section("Checkpoint", true)) {
        ImGui::PushItemWidth(-1);
        ImGui::InputText("##ckpt", &st.ckpt_path);
        track("checkpoint path");
        ImGui::PopItemWidth();
        ImGui::BeginDisabled(!snap.has_model || snap.fatal || st.ckpt_path.empty());
        if (ImGui::Button("Save (Ctrl+S)")) controls_save(st, tt);
        track("save");
        ImGui::SameLine();
        if (ImGui::Button("Load (Ctrl+O)")) controls_load(st, tt);
        track("load");
        ImGui::EndDisabled();
        if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
            ImGui::SetTooltip("Weights, optimizer state and loss history; the file must come from this corpus.");
        ImGui::InputDouble("autosave (min)", &st.autosave_min, 1, 5, "%.4g");
        track("autosave");
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Minutes between autosaves (fractions too), and on quit, to attnlab_autosave.safetensors "
                              "(0: off)");
        if (!(st.autosave_min >= 0)) st.autosave_min = 0;  // NaN too
        if (st.autosave_min > 525600) st.autosave_min = 525600;
    }
    if (!snap.ckpt_message.empty()) {  // shown with the section folded too: "saved" must be seen
        if (snap.ckpt_error) ImGui::PushStyleColor(ImGuiCol_Text, k_error_colour);
        else ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("%s", snap.ckpt_message.c_str());
        ImGui::PopStyleColor();
    }

    // --- restart ---
    bool model_open = section("Model (Apply & restart)", true);
    bool pending = restart_fields_differ(e, snap.cfg) || st.corpus_path != snap.corpus_path;
    auto rerrs = validate(e);
    if (model_open) {
        {  // taken before BeginCombo: once its list is open, the last item is the list's window, not the combo
            ImVec2 a = ImGui::GetCursorScreenPos();
            layout.preset_combo = rect_if_visible(a, ImVec2(a.x + ImGui::CalcItemWidth(), a.y + ImGui::GetFrameHeight()));
            layout.controls_widgets++;
            if (layout.preset_combo.z <= 0) layout.controls_hidden.push_back("preset");
        }
        bool combo_open = ImGui::BeginCombo("preset", e.preset.c_str());
        layout.preset_items.clear();
        if (combo_open) {
            for (const std::string& name : Config::preset_names()) {
                bool picked = ImGui::Selectable(name.c_str(), name == e.preset);
                layout.preset_items.emplace_back(name, visible_rect());
                if (picked) {
                    // the lecture's model here; its training settings wait for Apply & restart (see ControlsState)
                    Config p = e;
                    // the induction preset trains on its generated repeats (docs/induction.md); leaving it, on the
                    // default corpus again
                    bool generated = st.corpus_path.rfind("induction", 0) == 0;
                    if (name == "induction" && !generated) st.corpus_path = "induction";
                    else if (name != "induction" && e.preset == "induction" && generated) st.corpus_path = default_corpus_path();
                    p.apply_preset(name);
                    e = live_candidate(p, e);
                    st.preset_live = p;
                    st.preset_live_set = true;
                }
            }
            ImGui::EndCombo();
        }
        {
            bool custom = e.differs_from_preset();
            double ref = Config::lecture_val_loss(e.preset);
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
            if (ref > 0)
                ImGui::TextWrapped("%s val loss %.2f%s", Config::reference_source(e.preset), ref,
                                   custom ? " (switches changed)" : "");
            else if (custom) ImGui::TextWrapped("switches changed from the preset");
            ImGui::PopStyleColor();
        }
        ImGui::InputInt("block size (T)", &e.block_size);
        track("block size");
        field_error(rerrs, "--block-size");
        ImGui::BeginDisabled(e.kind == ModelKind::Bigram);
        ImGui::InputInt("n_embd (C)", &e.n_embd, std::max(1, e.n_head));  // +/- by n_head: heads of equal size stay possible
        track("n_embd");
        field_error(rerrs, "--n-embd");
        ImGui::InputInt("n_head", &e.n_head);
        track("n_head");
        field_error(rerrs, "--n-head");
        char hs_label[48] = "head size###head_size";  // 0 derives it: say what it comes to (the presets' n_embd / n_head)
        if (e.head_size == 0 && e.n_head > 0) std::snprintf(hs_label, sizeof hs_label, "head size (0: %d)###head_size", e.n_embd / e.n_head);
        ImGui::InputInt(hs_label, &e.head_size);
        track("head size");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("0: n_embd / n_head");
        field_error(rerrs, "--head-size");
        ImGui::InputInt("n_layer", &e.n_layer);
        track("n_layer");
        field_error(rerrs, "--n-layer");
        ImGui::Checkbox("feed-forward", &e.ffn);
        track("feed-forward");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Linear + ReLU after attention (C -> 4C -> C inside residual blocks)");
        ImGui::SameLine();
        ImGui::Checkbox("residual", &e.residual);
        track("residual");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("x + proj(attention), x + ffn: the lecture's Block");
        same_line_if_fits(labelled_width(ImGui::GetFrameHeight(), "GELU"));
        ImGui::BeginDisabled(!e.ffn);
        ImGui::Checkbox("GELU", &e.gelu);
        track("GELU");
        ImGui::EndDisabled();
        if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
            ImGui::SetTooltip("The feed-forward's activation: GELU, as nanoGPT's MLP (off: the lecture's ReLU); a run "
                              "made with --activation gelu-tanh keeps GELU's tanh form");
        ImGui::Checkbox("LayerNorm", &e.layernorm);
        track("LayerNorm");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Pre-norm in each block and a final LayerNorm before lm_head");
        ImGui::SameLine();
        ImGui::Checkbox("positions", &e.use_pos);
        track("positions");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Position embeddings; off, attention has no notion of order");
        ImGui::EndDisabled();
        field_error(rerrs, "--preset");  // nanoGPT's model with a switch it does not have
        ImGui::InputScalar("seed", ImGuiDataType_U64, &e.seed);
        track("seed");
        ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("corpus").x -
                                ImGui::GetStyle().ItemInnerSpacing.x);
        ImGui::InputTextWithHint("corpus", "a UTF-8 text file", &st.corpus_path);
        layout.corpus_field = visible_rect();
        track("corpus");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("The text to learn from: a UTF-8 text file");
        ImGui::BeginDisabled(!rerrs.empty() || snap.fatal);
        if (ImGui::Button("Apply & restart")) {
            st.restart_sent_cfg = e;
            st.restart_sent_corpus = st.corpus_path;
            tt.restart(st.preset_live_set ? live_candidate(e, st.preset_live) : e, st.corpus_path);
        }
        layout.restart_button = visible_rect();
        track("Apply & restart");
        ImGui::EndDisabled();
        if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
            ImGui::SetTooltip("A new model with these settings, training at once. Restarting loses the current weights, "
                              "the loss history and the samples.");
        if (pending && snap.step > 0) {
            ImGui::SameLine();
            ImGui::TextDisabled("loses %d steps", snap.step);
        }
    } else {
        layout.corpus_field = layout.restart_button = layout.preset_combo = {};
    }
    // under the button, never above it (a line appearing there would move the button under the next click); only
    // while the fields still say what was tried
    if (!snap.restart_error.empty() && st.corpus_path == st.restart_sent_corpus && !restart_fields_differ(e, st.restart_sent_cfg)) {
        ImGui::PushStyleColor(ImGuiCol_Text, k_error_colour);
        ImGui::TextWrapped("Not applied: %s", in_window_words(snap.restart_error).c_str());
        ImGui::PopStyleColor();
    }
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
    layout.controls_scroll_max = ImGui::GetScrollMaxY();
    ImGui::EndChild();
    return screenshot;
}

}  // namespace attn
