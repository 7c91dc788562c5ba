// The Attention panel's Heads view: every head's scores (train/head_scores.h) at the scrubbed step as a grid, heads
// knocked out with a click (train/ablation.h), and the shown head's score over the recorded steps.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "panel_attention_internal.h"

namespace attn {

// The Heads view (probe mode): every layer x head coloured by one score (train/head_scores.h) at the shown step, its
// number in the cell; a click shows that head's map. Under it, the shown head's score at every recorded step. Drawn
// instead of the map while "head scores" is on.
void draw_heads_view(AttentionState& st, const Snapshot& snap, TrainingThread& tt, PanelLayout& layout) {
    layout.heads_grid = layout.heads_by_combo = layout.heads_importance_item = ImVec4();
    layout.heads_hash = 0;
    layout.heads_by = st.heads_by;
    layout.importance_step = -1;
    constexpr int k_entropy = 5, k_importance = 6;
    static const char* const k_scores[] = {"induction", "previous", "duplicate", "first", "current", "entropy",
                                           "importance"};
    const int L = snap.att_layers, NH = snap.att_heads;
    const bool by_importance = st.heads_by == k_importance;
    // entropy (nats) is coloured against the most a row can have, log T; importance (the loss's increase) against
    // the largest at this step
    const double max_entropy = std::log(std::max(2, snap.att_T));
    double max_importance = 1e-9;
    for (double v : snap.head_importance) max_importance = std::max(max_importance, v);
    auto score = [&](const HeadScores& h) {
        switch (st.heads_by) {
            case 1: return h.previous;
            case 2: return h.duplicate;
            case 3: return h.first;
            case 4: return h.current;
            case k_entropy: return h.entropy;
            default: return h.induction;
        }
    };
    if (snap.head_scores.size() != size_t(L) * NH || L * NH == 0) {
        ImGui::TextDisabled("computing the scores at step %d...", snap.probe_step);
        return;
    }
    ImGui::SetNextItemWidth(110);
    if (ImGui::BeginCombo("colour by", k_scores[std::clamp(st.heads_by, 0, k_importance)])) {
        for (int i = 0; i <= k_importance; i++) {
            if (ImGui::Selectable(k_scores[i], st.heads_by == i) && st.heads_by != i) {
                st.heads_by = i;
                tt.set_head_importance(i == k_importance);
            }
            if (i == k_importance) layout.heads_importance_item = visible_rect();
        }
        ImGui::EndCombo();
    }
    layout.heads_by_combo = visible_rect();
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("induction, previous, duplicate, first, current: the share of attention on that pattern "
                          "(docs/induction.md); entropy: how spread each row is, in nats; importance: how much the "
                          "validation loss rises with the head alone knocked out (docs/circuits.md)");
    ImGui::SameLine();
    const bool importance_ready = by_importance && snap.importance_step == snap.probe_step &&
                                  snap.head_importance.size() == size_t(L) * NH;
    if (by_importance && !snap.importance_note.empty()) ImGui::TextDisabled("%s", snap.importance_note.c_str());
    else if (by_importance && !importance_ready) ImGui::TextDisabled("knocking out each head at step %d...", snap.probe_step);
    else ImGui::TextDisabled("at step %d", snap.probe_step);
    if (importance_ready) {
        layout.importance_step = snap.importance_step;
        layout.importance_first = snap.head_importance[0];
    }
    // the grid: rows = layers, columns = heads
    const float cw = std::max(40.0f, ImGui::CalcTextSize("0.00").x + 8), ch = ImGui::GetFrameHeight(), lw = 26;
    ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    uint64_t hash = 1469598103934665603ull;
    for (int h = 0; h < NH; h++) {
        char name[16];
        std::snprintf(name, sizeof name, "H%d", h + 1);
        dl->AddText(ImVec2(p0.x + lw + h * cw + 4, p0.y), IM_COL32(190, 190, 200, 255), name);
    }
    float gy = p0.y + ch;
    for (int l = 0; l < L; l++) {
        char name[16];
        std::snprintf(name, sizeof name, "L%d", l + 1);
        dl->AddText(ImVec2(p0.x, gy + l * ch + 3), IM_COL32(190, 190, 200, 255), name);
        for (int h = 0; h < NH; h++) {
            const HeadScores& hs = snap.head_scores[size_t(l) * NH + h];
            const double imp = importance_ready ? snap.head_importance[size_t(l) * NH + h] : NAN;
            const float v = float(by_importance ? imp : score(hs));
            // the colour's 0..1: a share as it is, entropy over log T, importance over the largest
            const float shade = st.heads_by == k_entropy ? float(v / max_entropy)
                                : by_importance          ? float(std::max(0.0, imp) / max_importance)
                                                         : v;
            ImVec2 a(p0.x + lw + h * cw, gy + l * ch), b(a.x + cw - 2, a.y + ch - 2);
            ImGui::SetCursorScreenPos(a);
            ImGui::PushID(l * NH + h);
            const HeadId id{l, h};
            auto knocked_at = std::find(st.knocked.begin(), st.knocked.end(), id);
            bool knocked = knocked_at != st.knocked.end();
            if (ImGui::InvisibleButton("##head", ImVec2(cw - 2, ch - 2))) {
                if (st.knock_mode) {  // out, or back in
                    if (knocked) st.knocked.erase(knocked_at);
                    else st.knocked.push_back(id);
                    knocked = !knocked;
                    tt.set_knockout(st.knocked);
                } else {  // its map
                    st.layer = l;
                    st.head = h;
                    st.heads_open = false;
                    tt.set_heads_view(false);
                    tt.set_attention_view(st.element, l, h);
                }
            }
            bool hovered = ImGui::IsItemHovered();
            ImGui::PopID();
            // a score the text gives nowhere to look (NaN: no repeated character for duplicate) is "-", in grey
            bool none = !std::isfinite(v);
            dl->AddRectFilled(a, b, none ? k_masked_colour : colormap(std::clamp(shade, 0.0f, 1.0f)));
            if (l == snap.att_layer && h == snap.att_head) dl->AddRect(a, b, IM_COL32(255, 255, 255, 255), 0, 0, 2.0f);
            if (knocked) {  // a red cross over a knocked-out head
                dl->AddLine(a, b, IM_COL32(230, 60, 60, 255), 2.0f);
                dl->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, a.y), IM_COL32(230, 60, 60, 255), 2.0f);
            }
            char buf[16];
            std::snprintf(buf, sizeof buf, none ? "-" : by_importance ? "%+.2f" : "%.2f", v);
            for (const char* c = buf; *c; c++) hash = (hash ^ uint8_t(*c)) * 1099511628211ull;
            ImVec2 ts = ImGui::CalcTextSize(buf);
            dl->AddText(ImVec2(a.x + (cw - 2 - ts.x) * 0.5f, a.y + (ch - 2 - ts.y) * 0.5f),
                        shade > 0.6f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 230), buf);
            if (hovered) {
                char importance[96] = "";
                if (importance_ready)
                    std::snprintf(importance, sizeof importance, "\nimportance %+.4f (the val loss with it knocked out)",
                                  imp);
                ImGui::SetTooltip("L%d H%d at step %d\nprevious %.3f  duplicate %.3f  induction %.3f\nfirst %.3f  current "
                                  "%.3f  entropy %.2f nats%s\n%s\n(click to see its map)", l + 1, h + 1, snap.probe_step,
                                  hs.previous, hs.duplicate, hs.induction, hs.first, hs.current, hs.entropy, importance,
                                  hs.label.empty() ? "(no clear role)" : ("reads as: " + hs.label).c_str());
            }
        }
    }
    ImGui::SetCursorScreenPos(ImVec2(p0.x, gy + L * ch + 2));
    ImGui::Dummy(ImVec2(lw + NH * cw, 1));
    // knocking heads out: a click toggles a head; the losses with them out, at the shown step
    if (ImGui::Checkbox("knock out", &st.knock_mode) && !st.knock_mode && !st.knocked.empty()) {
        st.knocked.clear();
        tt.set_knockout(st.knocked);
    }
    layout.knock_checkbox = visible_rect();
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("While on, a click on a head knocks it out (its output replaced by 0) or puts it back, and "
                          "the losses below say what that does at the shown step (docs/circuits.md)");
    layout.knock_val_ablated = -1;
    const Snapshot::Knockout& k = snap.knockout;
    if (!st.knocked.empty()) {
        if (!k.note.empty()) {
            ImGui::TextDisabled("%s", k.note.c_str());
        } else if (k.step != snap.probe_step || k.heads != st.knocked) {
            ImGui::TextDisabled("computing...");
        } else {
            ImGui::TextWrapped("%s out: val loss %.4f -> %.4f (%+.4f), probe loss %.3f -> %.3f",
                               head_list_text(k.heads).c_str(), k.val_intact, k.val_ablated, k.val_ablated - k.val_intact,
                               k.probe_intact, k.probe_ablated);
            if (ImGui::IsItemHovered()) {  // what each position predicts, intact and with the heads out
                ImGui::BeginTooltip();
                ImGui::Text("validation loss on fixed batches (the same at every step), and the probe's loss, intact "
                            "and with these heads' output replaced by 0, at step %d", k.step);
                ImGui::TextDisabled("pos char  loss intact -> out   likeliest next, intact -> out");
                for (size_t t = 0; t < snap.att_chars.size() && t < k.top_intact.size() && t < k.top_ablated.size(); t++) {
                    char loss[48] = "";
                    if (t >= 1 && t - 1 < k.loss_intact.size() && t - 1 < k.loss_ablated.size())
                        std::snprintf(loss, sizeof loss, "%.3f -> %.3f", k.loss_intact[t - 1], k.loss_ablated[t - 1]);
                    ImGui::Text("%3zu  %-4s %-18s  '%s' -> '%s'", t, visible_char(snap.att_chars[t]).c_str(), loss,
                                visible_char(k.top_intact[t]).c_str(), visible_char(k.top_ablated[t]).c_str());
                }
                ImGui::EndTooltip();
            }
            layout.knock_val_ablated = k.val_ablated;
            if (!k.sample.empty()) {
                ImGui::TextDisabled("sampled with them out (the Samples panel's seed and prompt):");
                ImGui::TextWrapped("%s", k.sample.c_str());
            }
        }
    }
    ImVec2 fb = ImGui::GetIO().DisplayFramebufferScale;
    layout.heads_grid = ImVec4((p0.x + lw) * fb.x, gy * fb.y, NH * cw * fb.x, L * ch * fb.y);
    layout.heads_hash = hash;
    // the shown head's score at every recorded step, the shown one marked
    const auto& steps = snap.probe_steps;
    if (by_importance) {
        ImGui::TextDisabled("importance at the shown step only (scrub to see it at another)");
    } else if (snap.head_lines.size() == steps.size() && steps.size() >= 2) {
        std::vector<float> v;
        int at = 0;
        for (size_t k = 0; k < steps.size(); k++) {
            v.push_back(float(score(snap.head_lines[k])));
            if (steps[k] <= snap.probe_step) at = int(k);
        }
        char overlay[64];
        std::snprintf(overlay, sizeof overlay, "L%d H%d %s %.2f", snap.att_layer + 1, snap.att_head + 1,
                      k_scores[std::clamp(st.heads_by, 0, k_importance)], v[size_t(at)]);
        ImGui::PlotLines("##head score", v.data(), int(v.size()), 0, overlay, 0.0f,
                         st.heads_by == k_entropy ? float(max_entropy) : 1.0f,
                         ImVec2(ImGui::GetContentRegionAvail().x, 34));
        ImVec2 mn = ImGui::GetItemRectMin(), mx = ImGui::GetItemRectMax();
        float pad = ImGui::GetStyle().FramePadding.x;
        float x = mn.x + pad + (mx.x - mn.x - 2 * pad) * float(at) / float(steps.size() - 1);
        dl->AddLine(ImVec2(x, mn.y), ImVec2(x, mx.y), IM_COL32(235, 235, 245, 200), 1.5f);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("L%d H%d's %s score at each recorded step, %d to %d (x: the snapshots in order)",
                              snap.att_layer + 1, snap.att_head + 1, k_scores[std::clamp(st.heads_by, 0, k_importance)],
                              steps.front(), steps.back());
    }
    if (snap.induction_rise_step >= 0)
        ImGui::TextDisabled("the strongest induction score rose most at step %d (marked on the loss plot)",
                            snap.induction_rise_step);
}

}  // namespace attn
