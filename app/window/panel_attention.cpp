// Attention panel: the (T,T) weights of one batch element as a heatmap, masked future in grey, legend, tooltip, input.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "panel_attention_internal.h"
#include "panels.h"
#include "renderer.h"

namespace attn {

const ImU32 k_masked_colour = IM_COL32(78, 78, 86, 255);
static const ImU32 k_unknown_colour = IM_COL32(255, 150, 60, 255);  // a probe character the corpus lacks
static bool unknown_at(const Snapshot& s, int t) { return t >= 0 && t < int(s.att_unknown.size()) && s.att_unknown[t]; }
// Cell sizes (pixels) from which the "values" checkbox writes each weight: "0.42", then ".42" (the font's widths,
// 2 px to spare)
static float values_cell() { return std::max(30.0f, ImGui::CalcTextSize("0.00").x + 2); }
static float digits_cell() { return ImGui::CalcTextSize(".00").x + 2; }

// Viridis, sampled at 9 stops: dark purple (0) to yellow (1).
constexpr float k_viridis[9][3] = {{68, 1, 84},    {71, 44, 122},  {59, 81, 139},   {44, 113, 142}, {33, 144, 141},
                                          {39, 173, 129}, {92, 200, 99}, {170, 220, 50}, {253, 231, 37}};

ImU32 colormap(float t) {
    const auto& stops = k_viridis;
    t = std::clamp(std::isfinite(t) ? t : 0.0f, 0.0f, 1.0f) * 8.0f;
    int i = std::min(int(t), 7);
    float f = t - i;
    auto mix = [&](int c) { return int(stops[i][c] + f * (stops[i + 1][c] - stops[i][c]) + 0.5f); };
    return IM_COL32(mix(0), mix(1), mix(2), 255);
}

// A vertical colour bar for weights 0..1 at (x, y), h tall, labelled 1.0 / 0.5 / 0.0 on its right (about 44 px wide).
static void colour_bar(ImDrawList* dl, float x, float y, float h) {
    for (int k = 0; k < 32; k++) {
        float y0 = y + h * (1 - (k + 1) / 32.0f), y1 = y + h * (1 - k / 32.0f);
        dl->AddRectFilled(ImVec2(x, y0), ImVec2(x + 14, y1 + 0.5f), colormap((k + 0.5f) / 32));
    }
    dl->AddText(ImVec2(x + 18, y - 2), IM_COL32(190, 190, 200, 255), "1.0");
    dl->AddText(ImVec2(x + 18, y + h * 0.5f - 7), IM_COL32(190, 190, 200, 255), "0.5");
    dl->AddText(ImVec2(x + 18, y + h - 12), IM_COL32(190, 190, 200, 255), "0.0");
}

// Every layer x head as a small heatmap (rows: layers, columns: heads), one colour bar for all; hovering a cell says
// its query, key and weight; clicking a map opens it on its own.
static void draw_all_heads(AttentionState& st, const Snapshot& snap, TrainingThread& tt, PanelLayout& layout) {
    int L = snap.att_layers, NH = snap.att_heads, G = snap.att_grid, T = snap.att_T;
    if (G <= 0 || L <= 0 || NH <= 0 || snap.att_all.size() != size_t(L) * NH * G * G) {
        ImGui::TextDisabled("Waiting for the next training step...");
        return;
    }
    int f = (T + G - 1) / std::max(G, 1);
    ImVec2 avail = ImGui::GetContentRegionAvail();
    const float label_w = 22, label_h = 16, pad = 6, bar_w = 52;
    float map = std::floor(std::min((avail.x - label_w - bar_w) / NH - pad, (avail.y - label_h - 18) / L - pad));
    if (map < 8) {
        ImGui::TextWrapped("%d x %d maps do not fit in this panel: make the window larger.", L, NH);
        return;
    }
    float cell = std::max(1.0f, std::floor(map / G));
    map = cell * G;
    ImGui::TextDisabled("%d layer%s x %d head%s, %s; click a map to open it", L, L == 1 ? "" : "s", NH, NH == 1 ? "" : "s",
                        f > 1 ? (std::to_string(f) + "x" + std::to_string(f) + " blocks averaged").c_str() : "every cell");
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton("##allheads", ImVec2(label_w + NH * (map + pad), label_h + L * (map + pad)));
    bool clicked = ImGui::IsItemClicked();
    ImVec2 m = ImGui::GetIO().MousePos;
    bool hovered = ImGui::IsItemHovered();
    ImVec2 fb = ImGui::GetIO().DisplayFramebufferScale;
    for (int h = 0; h < NH; h++) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "H%d", h + 1);  // layers and heads from 1, everywhere (docs/window.md)
        dl->AddText(ImVec2(p0.x + label_w + h * (map + pad), p0.y), IM_COL32(190, 190, 200, 255), buf);
    }
    for (int l = 0; l < L; l++) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "L%d", l + 1);
        dl->AddText(ImVec2(p0.x, p0.y + label_h + l * (map + pad)), IM_COL32(190, 190, 200, 255), buf);
        for (int h = 0; h < NH; h++) {
            ImVec2 g(p0.x + label_w + h * (map + pad), p0.y + label_h + l * (map + pad));
            const float* src = snap.att_all.data() + (size_t(l) * NH + h) * G * G;
            for (int i = 0; i < G; i++)
                for (int j = 0; j < G; j++) {
                    // a block wholly above the diagonal holds only future keys
                    bool masked = snap.cfg.causal && j * f > i * f + f - 1;
                    ImVec2 a(g.x + j * cell, g.y + i * cell);
                    float w = src[size_t(i) * G + j];
                    // a block's mean weight is about 1/f of a cell's: scale back up so the maps read the same
                    dl->AddRectFilled(a, ImVec2(a.x + cell, a.y + cell), masked ? k_masked_colour : colormap(w * f));
                }
            bool over = hovered && m.x >= g.x && m.x < g.x + map && m.y >= g.y && m.y < g.y + map;
            bool current = l == st.layer && h == st.head;
            if (over || current)
                dl->AddRect(ImVec2(g.x - 1, g.y - 1), ImVec2(g.x + map + 1, g.y + map + 1),
                            over ? IM_COL32(255, 255, 255, 255) : IM_COL32(255, 220, 80, 200), 0, 0, over ? 2.0f : 1.0f);
            if (l == 0 && h == 0) {
                layout.heatmap = ImVec4(g.x * fb.x, g.y * fb.y, map * fb.x, map * fb.y);
                layout.heatmap_T = G;
                layout.masked_colour = k_masked_colour;
            }
            if (over) {
                int i = std::clamp(int((m.y - g.y) / cell), 0, G - 1), j = std::clamp(int((m.x - g.x) / cell), 0, G - 1);
                auto ch = [&](int t) { return t < int(snap.att_chars.size()) ? named_char(snap.att_chars[t]) : std::string(); };
                char what[48];
                if (snap.cfg.causal && j * f > i * f + f - 1) std::snprintf(what, sizeof what, "masked: future keys");
                else std::snprintf(what, sizeof what, "%s %.4f", f == 1 ? "weight" : "mean weight", src[size_t(i) * G + j]);
                if (f == 1)
                    ImGui::SetTooltip("layer %d, head %d\nquery t=%d %s\nkey   t=%d %s\n%s (click to open)", l + 1, h + 1, i,
                                      ch(i).c_str(), j, ch(j).c_str(), what);
                else
                    ImGui::SetTooltip("layer %d, head %d\nqueries t=%d-%d, keys t=%d-%d\n%s (click to open)", l + 1, h + 1, i * f,
                                      std::min(T, i * f + f) - 1, j * f, std::min(T, j * f + f) - 1, what);
                if (clicked) {
                    st.layer = l;
                    st.head = h;
                    st.all_heads = false;
                    tt.set_attention_all(false);
                    tt.set_attention_view(st.element, l, h);
                }
            }
        }
    }
    // one colour bar for every map (a block's mean weight is scaled by f, as drawn), the masked swatch under it
    float bx = p0.x + label_w + NH * (map + pad) + 4, by = p0.y + label_h, bh = std::max(40.0f, L * (map + pad) - pad - 20);
    colour_bar(dl, bx, by, bh);
    dl->AddRectFilled(ImVec2(bx, by + bh + 6), ImVec2(bx + 14, by + bh + 20), k_masked_colour);
    dl->AddText(ImVec2(bx + 18, by + bh + 6), IM_COL32(190, 190, 200, 255), "mask");
}

// The shown head's entropy and distance at every recorded step, as two small line plots side by side (x: the
// snapshots in order, dense early and sparse later), a cursor at the shown one.
static void draw_summary_plots(const Snapshot& snap) {
    const auto& steps = snap.probe_steps;
    int S = int(steps.size());
    if (S < 2 || snap.probe_entropy.size() != size_t(S) || snap.probe_distance.size() != size_t(S)) return;
    int at = 0;
    for (int k = 0; k < S; k++)
        if (steps[k] <= snap.probe_step) at = k;
    float w = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
    auto plot = [&](const char* id, const std::vector<float>& v, const char* what, const char* meaning) {
        char overlay[64];
        std::snprintf(overlay, sizeof overlay, "%s %.2f", what, v[at]);
        ImGui::PlotLines(id, v.data(), S, 0, overlay, 0.0f, FLT_MAX, ImVec2(std::max(60.0f, w), 30));
        ImVec2 mn = ImGui::GetItemRectMin(), mx = ImGui::GetItemRectMax();
        float pad = ImGui::GetStyle().FramePadding.x, x = mn.x + pad + (mx.x - mn.x - 2 * pad) * float(at) / float(S - 1);
        ImGui::GetWindowDrawList()->AddLine(ImVec2(x, mn.y), ImVec2(x, mx.y), IM_COL32(235, 235, 245, 200), 1.5f);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("L%d H%d's %s at each recorded step, %d to %d (x: the snapshots in order); the line: "
                              "step %d\n%s", snap.att_layer + 1, snap.att_head + 1, what, steps.front(), steps.back(),
                              snap.probe_step, meaning);
    };
    plot("##entropy", snap.probe_entropy, "entropy", "row entropy in nats: high = spread over the past, 0 = one character");
    ImGui::SameLine();
    plot("##distance", snap.probe_distance, "distance", "mean distance attended: 1 = the previous character");
}

// What the map shows: the last training step's batch element, or the time-lapse's probe (Session::timelapse) at a
// recorded step: a timeline over the recorded steps, |< < > >| to step through them, Live to follow training.
static void draw_source(AttentionState& st, const Snapshot& snap, TrainingThread& tt, PanelLayout& layout) {
    bool was = st.probe;
    if (ImGui::RadioButton("training batch", !st.probe)) st.probe = false;
    layout.batch_button = visible_rect();
    ImGui::SameLine();
    if (ImGui::RadioButton("probe", st.probe)) st.probe = true;
    layout.probe_button = visible_rect();
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("The time-lapse: the probe text (--probe) as the model saw it at each recorded step "
                          "(0, 1, 2, 5, 10, 20, 50, ... and every evaluation)");
    layout.probe_step = snap.att_probe ? snap.probe_step : -1;
    if (!st.probe) {
        if (was) tt.set_attention_probe(false);
        return;
    }
    const std::vector<int>& steps = snap.probe_steps;
    int S = int(steps.size());
    int at = 0;  // the index of the shown step
    for (int k = 0; k < S; k++)
        if (steps[k] <= snap.probe_step) at = k;
    int want = st.live ? S - 1 : at;
    ImGui::SameLine();
    if (ImGui::Checkbox("live", &st.live) && st.live) want = S - 1, st.playing = false;
    // the probe text: Enter records a new time-lapse for it
    if (!st.probe_edited) {  // a newline shows as \n (a one-line field), and is typed so
        std::string shown;
        for (char c : snap.probe_text) shown += c == '\n' ? std::string("\\n") : std::string(1, c);
        std::snprintf(st.probe_text, sizeof st.probe_text, "%s", shown.c_str());
    }
    // the probes shown so far, newest first: one click brings one back (its views computed again from the weights)
    auto remember = [&](const std::string& text) {
        if (text.empty()) return;
        auto& r = st.recent_probes;
        r.erase(std::remove(r.begin(), r.end(), text), r.end());
        r.insert(r.begin(), text);
        if (r.size() > AttentionState::k_recent_probes) r.resize(AttentionState::k_recent_probes);
    };
    remember(snap.probe_text);
    float recent_w = st.recent_probes.size() > 1 ? ImGui::GetFrameHeight() + ImGui::GetStyle().ItemSpacing.x : 0;
    ImGui::SetNextItemWidth(std::max(120.0f, ImGui::GetContentRegionAvail().x - labelled_width(0, "probe text") - recent_w));
    if (ImGui::InputText("##probe text", st.probe_text, sizeof st.probe_text, ImGuiInputTextFlags_EnterReturnsTrue)) {
        std::string text;
        for (const char* c = st.probe_text; *c; c++) {
            if (c[0] == '\\' && c[1] == 'n') text += '\n', c++;
            else text += *c;
        }
        tt.set_probe_text(text);
        st.probe_edited = false;
    } else if (ImGui::IsItemActive()) {
        st.probe_edited = true;
    }
    layout.probe_field = visible_rect();
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("At most block size characters of the corpus's (\\n: a newline); Enter computes its views at "
                          "every recorded step, from the weights recorded there");
    if (st.recent_probes.size() > 1) {
        ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
        if (ImGui::BeginCombo("##recent probes", "", ImGuiComboFlags_NoPreview)) {
            for (const std::string& text : st.recent_probes) {
                std::string shown;
                for (char c : text) shown += c == '\n' ? std::string("\\n") : std::string(1, c);
                if (ImGui::Selectable(shown.c_str(), text == snap.probe_text) && text != snap.probe_text) {
                    tt.set_probe_text(text);
                    st.probe_edited = false;
                }
            }
            ImGui::EndCombo();
        }
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("The last probes: pick one to see it again");
    }
    ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
    ImGui::TextUnformatted("probe text");
    if (!snap.probe_note.empty()) {  // the characters left out or cut: said here, not only on stdout
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.75f, 0.35f, 1.0f));
        ImGui::TextWrapped("%s", snap.probe_note.c_str());
        ImGui::PopStyleColor();
        layout.probe_note = visible_rect();
    } else {
        layout.probe_note = ImVec4();
    }
    if (S == 0) {
        if (!was) tt.set_attention_probe(true, -1);
        ImGui::TextDisabled("no snapshot recorded yet");
        return;
    }
    auto stop = [&] { st.live = false, st.playing = false; };
    if (st.step_by != 0) want = std::clamp(at + st.step_by, 0, S - 1), stop();  // the arrow keys
    st.step_by = 0;
    if (st.jump_to >= 0) {  // a click on the loss plot: the recorded step nearest it
        int best = 0;
        for (int k = 1; k < S; k++)
            if (std::abs(steps[k] - st.jump_to) < std::abs(steps[best] - st.jump_to)) best = k;
        want = best, stop();
        st.jump_to = -1;
    }
    double now = ImGui::GetTime();
    if (st.playing && now >= st.play_next) {  // one recorded step further, play_speed a second, to the last
        if (at + 1 >= S) st.playing = false;
        else want = at + 1, st.play_next = now + 1.0 / std::max(0.25f, st.play_speed);
    }
    if (ImGui::SmallButton("|<")) want = 0, stop();
    layout.timeline_first = visible_rect();
    ImGui::SameLine();
    if (ImGui::SmallButton("<")) want = std::max(0, at - 1), stop();
    ImGui::SameLine();
    if (ImGui::SmallButton(st.playing ? "Pause" : "Play")) {
        st.playing = !st.playing;
        if (st.playing) {
            if (st.live || at + 1 >= S) want = 0;  // from the first snapshot: the formation from the start
            st.live = false;
            st.play_next = now + 1.0 / std::max(0.25f, st.play_speed);
        }
    }
    layout.play_button = visible_rect();
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Play the recorded steps one after another (from the first, or from here), at the speed "
                          "beside; Left/Right step through them");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(60);
    ImGui::SliderFloat("##speed", &st.play_speed, 0.5f, 20.0f, "%.1f/s");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Snapshots a second while playing");
    ImGui::SameLine();
    if (ImGui::SmallButton(">")) want = std::min(S - 1, at + 1), stop();
    ImGui::SameLine();
    if (ImGui::SmallButton(">|")) want = S - 1, st.playing = false;
    ImGui::SameLine();
    char label[48];
    std::snprintf(label, sizeof label, "step %d", snap.probe_step);
    ImGui::SetNextItemWidth(std::max(80.0f, ImGui::GetContentRegionAvail().x));
    int idx = want;
    if (ImGui::SliderInt("##timeline", &idx, 0, S - 1, label)) want = idx, stop();
    layout.timeline = visible_rect();
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%d snapshots from step %d to %d: drag to any of them", S, steps.front(), steps.back());
    int step = st.live ? -1 : steps[std::clamp(want, 0, S - 1)];
    if (!was || step != st.probe_step) tt.set_attention_probe(true, step);
    st.probe_step = step;
}

void draw_attention(AttentionState& st, const Snapshot& snap, TrainingThread& tt, PanelLayout& layout) {
    if (!snap.has_model) {
        ImGui::TextWrapped("No model yet.");
        return;
    }
    if (snap.cfg.kind == ModelKind::Bigram) {
        ImGui::TextWrapped("The bigram model has no attention: each character only looks at itself. "
                           "Choose the single-head preset and press Apply & restart to watch attention form.");
        return;
    }
    int B = snap.cfg.batch_size, L = snap.cfg.n_layer, NH = snap.cfg.n_head;
    draw_source(st, snap, tt, layout);
    bool changed = false;
    if (!st.probe) {
        ImGui::SetNextItemWidth(90);
        changed |= ImGui::SliderInt("element", &st.element, 0, std::max(0, B - 1));
    }
    if (L > 1) {
        same_line_if_fits(labelled_width(70, "layer"));
        ImGui::SetNextItemWidth(70);
        int shown = st.layer + 1;  // numbered from 1, as inspect and the grid number them
        if (ImGui::SliderInt("layer", &shown, 1, L)) st.layer = shown - 1, changed = true;
    }
    if (NH > 1) {
        same_line_if_fits(labelled_width(70, "head"));
        ImGui::SetNextItemWidth(70);
        int shown = st.head + 1;
        if (ImGui::SliderInt("head", &shown, 1, NH)) st.head = shown - 1, changed = true;
    }
    st.element = std::clamp(st.element, 0, std::max(0, B - 1));
    st.layer = std::clamp(st.layer, 0, std::max(0, L - 1));
    st.head = std::clamp(st.head, 0, std::max(0, NH - 1));
    if (changed) tt.set_attention_view(st.element, st.layer, st.head);
    if (L * NH > 1) {
        if (ImGui::Checkbox("all heads (H)", &st.all_heads)) tt.set_attention_all(st.all_heads);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Every layer x head as a small map, updated live");
        if (st.all_heads) {
            draw_all_heads(st, snap, tt, layout);
            return;
        }
    } else if (st.all_heads) {
        st.all_heads = false;  // one map is all there is
        tt.set_attention_all(false);
    }
    // head scores: in the probe view, a grid of every head's scores at the shown step instead of the map
    layout.heads_header = layout.heads_grid = layout.knock_checkbox = ImVec4();
    layout.knock_val_ablated = -1;
    if (st.probe) {
        if (L * NH > 1) ImGui::SameLine();
        if (ImGui::Checkbox("head scores", &st.heads_open)) tt.set_heads_view(st.heads_open);
        layout.heads_header = visible_rect();
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Every head's share of attention on a pattern at the shown step (docs/induction.md): the "
                              "previous character, the same character earlier (duplicate), the character after an "
                              "earlier copy of this one (induction, on random strings written twice), the first, the "
                              "current");
        if (st.heads_open && snap.att_probe) {
            draw_heads_view(st, snap, tt, layout);
            return;
        }
    } else if (st.heads_open) {
        st.heads_open = false;
        tt.set_heads_view(false);
    }
    if (L * NH > 1) same_line_if_fits(labelled_width(ImGui::GetFrameHeight(), "values"));
    ImGui::Checkbox("values", &st.show_values);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Each weight written in its cell: two decimals from %.0f px cells, two digits (.42) from %.0f px; "
                          "any size: hover a cell", values_cell(), digits_cell());
    const char* note = st.show_values && st.cell > 0 && st.cell < digits_cell() ? "(too small for values)"
                                                                                  : "rows=query cols=key";
    same_line_if_fits(ImGui::CalcTextSize(note).x);
    ImGui::TextDisabled("%s", note);
    int T = snap.att_T;
    if (T <= 0 || snap.attention.size() != size_t(T) * T) {
        ImGui::TextDisabled("Waiting for the first training step...");
        return;
    }
    if (snap.att_probe) {  // the shown head in numbers, and in words when they are clear (docs/timelapse.md)
        HeadSummary hs = summarize_head(snap.attention, T, snap.cfg.causal);
        // the line keeps the height of its longest form (the longest label, the last step), so that nothing below it
        // moves while the time-lapse plays
        char longest[160];
        std::snprintf(longest, sizeof longest, "L%d H%d at step %d: entropy 0.00 nats, distance 000.00: previous "
                      "character", snap.att_layers, snap.att_heads, snap.probe_steps.empty() ? 0 : snap.probe_steps.back());
        float need = ImGui::CalcTextSize(longest, nullptr, false, ImGui::GetContentRegionAvail().x).y;
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("L%d H%d at step %d: entropy %.2f nats, distance %.2f%s%s", snap.att_layer + 1,
                           snap.att_head + 1, snap.probe_step, hs.entropy, hs.mean_distance,
                           hs.label.empty() ? "" : ": ", hs.label.c_str());
        ImGui::PopStyleColor();
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("entropy: mean over rows of -sum p log p (0: one character; uniform: log of the positions "
                              "seen)\ndistance: mean over rows of sum p |i - j| (1: the previous character)\n"
                              "named when over half the weight, on average, is on the previous, current or first "
                              "character, or the rows are over 90%% of uniform");
        if (float used = ImGui::GetItemRectSize().y; used < need) ImGui::SetCursorPosY(ImGui::GetCursorPosY() + need - used);
        draw_summary_plots(snap);
    }

    // Cells of at least 3 pixels; a long context shows a window of n positions that a slider moves.
    ImVec2 avail0 = ImGui::GetContentRegionAvail();
    float label_w = 26, label_h = 18;
    const float legend_w = 110, min_cell = 3;
    // the input sequence beside the map repeats its labels: dropped when the map would be under 160 px with it
    float seq_w = 0, room = 0;
    auto fit = [&] {
        seq_w = avail0.x - label_w - legend_w - 90 >= std::min(160.0f, avail0.y - label_h - 4) ? 90 : 0;
        room = std::min(avail0.x - label_w - legend_w - seq_w, avail0.y - label_h - 4);
    };
    fit();
    // Up to 32 positions every character is labelled: where the cells are narrower than a character, in two
    // staggered rows (columns) of labels, which need more room (every other label would read as another string).
    bool stagger = T <= 32 && std::floor(room / T) < ImGui::GetFontSize();
    if (stagger) {
        label_w = 46;
        label_h = 32;
    }
    if (snap.bpe_tokens) label_w += 40;  // tokens are wider than characters: their row labels get room
    fit();
    int n = std::clamp(int(room / min_cell), 1, T);
    if (n < T) {
        ImGui::SetNextItemWidth(200);
        ImGui::SliderInt("first position", &st.first, 0, T - n);
        ImGui::SameLine();
        ImGui::TextDisabled("showing %d of %d", n, T);
        room = std::min(room, ImGui::GetContentRegionAvail().y - label_h - 4);
        n = std::clamp(int(room / min_cell), 1, T);
    }
    int o = std::clamp(st.first, 0, T - n);
    ImDrawList* panel_dl = ImGui::GetWindowDrawList();
    ImVec2 p0 = ImGui::GetCursorScreenPos();
    float cell = std::max(std::floor(room / n), 2.0f);
    st.cell = cell;
    ImVec2 g(p0.x + label_w, p0.y + label_h);
    float side = cell * n;
    // The map and its labels change every frame, the rest of the panel seldom: a child window of their size has a
    // draw list of its own, so the renderer's partial redraw (renderer.h) draws only it again (on a CPU driver
    // drawing is paid per pixel; the whole panel is 2.5x the area).
    ImGui::BeginChild("##map", ImVec2(label_w + side, label_h + side), false,
                      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImGui::InvisibleButton("##heatmap", ImVec2(label_w + side, label_h + side));
    bool hovered = ImGui::IsItemHovered();
    ImVec2 fb = ImGui::GetIO().DisplayFramebufferScale;
    layout.heatmap = ImVec4(g.x * fb.x, g.y * fb.y, side * fb.x, side * fb.y);
    layout.heatmap_T = n;
    layout.heatmap_labels.clear();
    for (int k = 0; k < n && o + k < int(snap.att_chars.size()); k++)
        layout.heatmap_labels.append(k ? " " : "").append(visible_char(snap.att_chars[size_t(o + k)]));
    layout.masked_colour = k_masked_colour;

    float gap = cell >= 8 ? 1.0f : 0.0f;
    const float min_values = values_cell(), min_digits = digits_cell();
    int hi = -1, hj = -1;  // hovered query and key positions (absolute)
    if (hovered) {
        ImVec2 m = ImGui::GetIO().MousePos;
        int i = int((m.y - g.y) / cell), j = int((m.x - g.x) / cell);
        if (m.x >= g.x && m.y >= g.y && i < n && j < n) hi = o + i, hj = o + j;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int qi = o + i, kj = o + j;
            bool masked = snap.cfg.causal && kj > qi;
            float w = snap.attention[size_t(qi) * T + kj];
            ImVec2 a(g.x + j * cell, g.y + i * cell), b(a.x + cell - gap, a.y + cell - gap);
            // big cells: clears (add_opaque_fill), cheaper per pixel on a CPU driver; small ones, when there may be
            // thousands: triangles, one draw for all
            if (cell >= 16) add_opaque_fill(dl, a, b, masked ? k_masked_colour : colormap(w));
            else dl->AddRectFilled(a, b, masked ? k_masked_colour : colormap(w));
            if (!masked && st.show_values && cell >= min_digits) {
                char buf[16];
                if (cell >= min_values) std::snprintf(buf, sizeof buf, "%.2f", w);
                else if (w >= 0.995f) std::snprintf(buf, sizeof buf, "1");  // two digits: .42 for 0.42
                else std::snprintf(buf, sizeof buf, ".%02d", std::clamp(int(w * 100 + 0.5f), 0, 99));
                ImVec2 ts = ImGui::CalcTextSize(buf);
                if (ts.x > cell - 2) continue;  // a wide font: no text rather than text over the next cell
                dl->AddText(ImVec2(a.x + (cell - ts.x) * 0.5f, a.y + (cell - ts.y) * 0.5f),
                            w > 0.6f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 230), buf);
            }
        }
    if (hi >= 0) {
        ImVec2 a(g.x + (hj - o) * cell, g.y + (hi - o) * cell);
        dl->AddRect(a, ImVec2(a.x + cell, a.y + cell), IM_COL32(255, 255, 255, 255), 0, 0, 2.0f);
    }

    // row labels (queries) and column labels (keys): the input characters
    // every character up to 32 positions (staggered in two rows and columns where cells are small), past that
    // every k-th; a tick joins a staggered label to its cell
    int every = stagger ? 1 : std::max(1, int(std::ceil(14.0f / cell)));
    for (int k = 0; k < n && o + k < int(snap.att_chars.size()); k += every) {
        int t = o + k;
        float far = stagger && k % 2 ? 1.0f : 0.0f;  // odd positions one label further out
        // a token's label cut to its room: the row's left of the map, the column's over its cells (the hover says all)
        std::string full = visible_char(snap.att_chars[t]);
        std::string c = snap.bpe_tokens ? fit_text(full, label_w - 8 - far * 20) : full;
        std::string cc = snap.bpe_tokens ? fit_text(full, std::max(cell * float(stagger ? 2 : every) - 2, 8.0f)) : full;
        ImVec2 ts = ImGui::CalcTextSize(c.c_str()), tc = ImGui::CalcTextSize(cc.c_str());
        ImU32 col = (t == hi || t == hj) ? IM_COL32(255, 255, 255, 255)
                    : unknown_at(snap, t)  ? k_unknown_colour
                                           : IM_COL32(190, 190, 200, 255);
        float row_y = g.y + k * cell + cell * 0.5f, col_x = g.x + k * cell + cell * 0.5f;
        float lx = g.x - 6 - far * 20 - ts.x, ty = p0.y + (stagger ? (1 - far) * 15 : 0);
        dl->AddText(ImVec2(lx, row_y - ts.y * 0.5f), col, c.c_str());
        dl->AddText(ImVec2(col_x - tc.x * 0.5f, ty), col, cc.c_str());
        if (stagger) {
            ImU32 tick = IM_COL32(110, 110, 120, 255);
            dl->AddLine(ImVec2(lx + ts.x + 1, row_y), ImVec2(g.x - 1, row_y), tick);
            dl->AddLine(ImVec2(col_x, ty + tc.y), ImVec2(col_x, g.y - 1), tick);
        }
    }
    ImGui::EndChild();
    dl = panel_dl;

    // legend: colour bar 0..1, then the masked swatch and the label glyphs' key below it, all within the map's height
    // (the panel's layout never grows for it): the bar gives up height first, down to 40 px; then the key's lines
    // that do not fit are left out, last first
    bool any_unknown = std::find(snap.att_unknown.begin(), snap.att_unknown.end(), 1) != snap.att_unknown.end();
    const float k_below = any_unknown ? 96 : 68, bottom = g.y + std::max(side, 40.0f);
    float lx = g.x + side + 14, bar_h = std::max(std::min(side, 40.0f), side - k_below - 10);
    colour_bar(dl, lx, g.y, bar_h);
    float sy = g.y + bar_h + 10, used = g.y + bar_h;
    const ImU32 key = IM_COL32(150, 150, 160, 255);
    auto fits = [&](float y, float h) {
        if (y + h > bottom + 0.5f) return false;
        used = std::max(used, y + h);
        return true;
    };
    if (fits(sy, 28)) {
        dl->AddRectFilled(ImVec2(lx, sy), ImVec2(lx + 14, sy + 14), k_masked_colour);
        dl->AddText(ImVec2(lx + 18, sy), IM_COL32(190, 190, 200, 255), "masked");
        dl->AddText(ImVec2(lx + 18, sy + 14), key, "(future)");
        // the glyphs that stand for invisible characters in the labels
        if (fits(sy + 36, 14)) dl->AddText(ImVec2(lx, sy + 36), key, (visible_char(" ") + "  space").c_str());
        if (fits(sy + 50, 14)) dl->AddText(ImVec2(lx, sy + 50), key, (visible_char("\n") + " newline").c_str());
        if (any_unknown && fits(sy + 64, 28)) {  // a probe's characters the corpus lacks: their labels in this colour
            dl->AddText(ImVec2(lx, sy + 64), k_unknown_colour, "not in the");
            dl->AddText(ImVec2(lx, sy + 78), k_unknown_colour, "corpus");
        }
    }
    {
        ImVec2 fb = ImGui::GetIO().DisplayFramebufferScale, clip = dl->GetClipRectMax();
        layout.legend = ImVec4(lx * fb.x, g.y * fb.y, (legend_w - 14) * fb.x, (used - g.y) * fb.y);
        layout.legend_clipped = lx + legend_w - 14 > clip.x + 0.5f || used > clip.y + 0.5f;
    }

    // the input sequence beside the map
    if (seq_w > 0) {
        ImGui::SetCursorScreenPos(ImVec2(lx + legend_w - 14, p0.y));
        ImGui::BeginChild("##sequence", ImVec2(seq_w, std::max(label_h + side, 60.0f)), true);
        if (snap.att_probe) {
            ImGui::TextDisabled("probe");
        } else {
            ImGui::TextDisabled("input #%d", snap.att_element);
            if (snap.att_element != st.element) ImGui::TextDisabled("(#%d next step)", st.element);
        }
        for (int t = 0; t < int(snap.att_chars.size()); t++) {
            bool on = t == hi || t == hj;
            if (on) ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 220, 80, 255));
            if (unknown_at(snap, t))
                ImGui::TextColored(ImColor(k_unknown_colour), "%3d %s", t, visible_char(snap.att_chars[t]).c_str());
            else
                ImGui::Text("%3d %s", t, visible_char(snap.att_chars[t]).c_str());
            if (on) ImGui::PopStyleColor();
        }
        ImGui::EndChild();
    }

    if (hi >= 0 && hi < int(snap.att_chars.size()) && hj < int(snap.att_chars.size())) {
        ImGui::BeginTooltip();
        ImGui::Text("query  t=%d %s", hi, named_char(snap.att_chars[hi]).c_str());
        ImGui::Text("key    t=%d %s", hj, named_char(snap.att_chars[hj]).c_str());
        if (snap.cfg.causal && hj > hi)
            ImGui::TextDisabled("masked: a query cannot see future keys");
        else
            ImGui::Text("weight %.4f", snap.attention[size_t(hi) * T + hj]);
        if (snap.att_probe && snap.probe_top.size() == size_t(T) * k_probe_top) {
            if (unknown_at(snap, hi))
                ImGui::TextColored(ImColor(k_unknown_colour), "'%s' is not in the corpus: fed as a stand-in, no loss",
                                   visible_char(snap.att_chars[hi]).c_str());
            else if (hi >= 1 && hi - 1 < int(snap.probe_loss.size()))
                ImGui::Text("loss on '%s': %.3f (-log p given the characters before)",
                            visible_char(snap.att_chars[hi]).c_str(), snap.probe_loss[hi - 1]);
            ImGui::TextDisabled("next after t=%d, as the model predicts at step %d:", hi, snap.probe_step);
            for (int k = 0; k < k_probe_top; k++) {
                const auto& [c, p] = snap.probe_top[size_t(hi) * k_probe_top + k];
                if (c.empty()) continue;
                ImGui::Text("  '%s' %.3f", visible_char(c).c_str(), p);
            }
        }
        ImGui::EndTooltip();
    }
}

}  // namespace attn
