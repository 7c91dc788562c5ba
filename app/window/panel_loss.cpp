// Loss panel: train/val estimates and raw per-step loss vs step, drawn with ImDrawList; hover readout; CSV export.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <map>

#include "io/files.h"
#include "panels.h"
#include "plot_scale.h"
#include "renderer.h"

namespace attn {

static const ImU32 k_raw_colour = IM_COL32(170, 170, 185, 80);
static const ImU32 k_train_colour = IM_COL32(90, 165, 255, 255);
static const ImU32 k_val_colour = IM_COL32(255, 150, 50, 255);
static const ImU32 k_ref_colour = IM_COL32(200, 200, 120, 200);
static const ImU32 k_grid_colour = IM_COL32(60, 60, 70, 255);
static const ImU32 k_bg_colour = IM_COL32(22, 22, 28, 255);
static const ImU32 k_ref_faint = IM_COL32(200, 200, 120, 70);
static const ImU32 k_cursor_colour = IM_COL32(235, 235, 245, 200);  // the time-lapse's scrubbed step
static const ImU32 k_induction_colour = IM_COL32(255, 150, 60, 220);  // where an induction head formed
static const ImU32 k_icl_colour = IM_COL32(120, 220, 160, 230);       // the in-context learning score
static const ImU32 k_spike_colour = IM_COL32(255, 90, 90, 220);    // a per-step loss above the y axis
// Ghost runs cycle through these: none close to the train blue, the val orange, the reference yellow or the spike red.
static const ImU32 k_ghost_colours[] = {IM_COL32(120, 220, 140, 255), IM_COL32(235, 110, 200, 255),
                                        IM_COL32(175, 135, 255, 255), IM_COL32(215, 215, 225, 255)};

static ImU32 ghost_colour(uint64_t id, int alpha) {
    ImU32 c = k_ghost_colours[id % (sizeof k_ghost_colours / sizeof k_ghost_colours[0])];
    return (c & 0x00FFFFFFu) | (ImU32(alpha) << 24);
}

// Takes the runs the thread finished since the last frame.
static void take_finished_runs(LossState& st, const Snapshot& snap) {
    for (const FinishedRun& r : snap.finished_runs)
        if (r.id > st.ghosts_seen) {
            st.ghosts.push_back({r.id, r.name, r.evals, true});
            st.ghosts_seen = r.id;
        }
    if (st.ghosts.size() > 12) st.ghosts.erase(st.ghosts.begin());  // the oldest go first
}

// The list under the plot: show/hide, colour, editable name, remove; Clear all.
static void draw_ghost_list(LossState& st, float height) {
    ImGui::BeginChild("##ghosts", ImVec2(0, height), false);
    ImGui::TextDisabled("Earlier runs (val solid, train faint)");
    ImGui::SameLine();
    if (ImGui::SmallButton("Hide all"))
        for (Ghost& g : st.ghosts) g.visible = false;
    ImGui::SameLine();
    if (ImGui::SmallButton("Clear all")) st.ghosts.clear();
    int remove = -1;
    for (int i = int(st.ghosts.size()) - 1; i >= 0; i--) {  // newest first
        Ghost& g = st.ghosts[i];
        ImGui::PushID(int(g.id));
        ImGui::Checkbox("##show", &g.visible);
        ImGui::SameLine();
        ImVec2 p = ImGui::GetCursorScreenPos();
        float h = ImGui::GetFrameHeight();
        ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + h * 0.35f), ImVec2(p.x + 14, p.y + h * 0.65f),
                                                  ghost_colour(g.id, 255));
        ImGui::Dummy(ImVec2(16, h));
        ImGui::SameLine();
        ImGui::SetNextItemWidth(std::max(80.0f, ImGui::GetContentRegionAvail().x - 30));
        ImGui::InputText("##name", &g.name);
        if (ImGui::IsItemHovered() && !g.evals.empty())
            ImGui::SetTooltip("ends at step %d, val %.4f (the plot spans this run's max iters at most)",
                              g.evals.back().step, g.evals.back().val);
        ImGui::SameLine();
        if (ImGui::SmallButton("x")) remove = i;
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Remove this run from the plot");
        ImGui::PopID();
    }
    if (remove >= 0) st.ghosts.erase(st.ghosts.begin() + remove);
    ImGui::EndChild();
}

std::string write_loss_csv(const Snapshot& snap, const std::string& path) {
    std::ostringstream f;
    std::map<int, EvalPoint> ev;
    for (auto& e : snap.evals) ev[e.step] = e;
    f << "step,train_loss,eval_train_loss,eval_val_loss\n";
    int last = std::max<int>(int(snap.step_losses.size()), snap.evals.empty() ? 0 : snap.evals.back().step);
    for (int s = 0; s <= last; s++) {
        bool raw = s >= 1 && s <= int(snap.step_losses.size());
        auto it = ev.find(s);
        if (!raw && it == ev.end()) continue;
        f << s << ',';
        if (raw) f << snap.step_losses[s - 1];
        f << ',';
        if (it != ev.end()) f << it->second.train << ',' << it->second.val;
        else f << ',';
        f << '\n';
    }
    try {
        write_file_atomic(path, "the loss CSV", f.str());
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

static void dashed_hline(ImDrawList* dl, float x0, float x1, float y, ImU32 col) {
    for (float x = x0; x < x1; x += 10) dl->AddLine(ImVec2(x, y), ImVec2(std::min(x + 6, x1), y), col, 1.5f);
}

// A polyline drawn in dashes of 6 px with gaps of 4 (the train estimate, over the val one).
static void dashed_polyline(ImDrawList* dl, const std::vector<ImVec2>& pts, ImU32 col, float thickness) {
    float phase = 0;  // distance along the dash pattern (10 px)
    for (size_t i = 1; i < pts.size(); i++) {
        ImVec2 p = pts[i - 1], q = pts[i];
        float len = std::hypot(q.x - p.x, q.y - p.y);
        for (float t = 0; t < len;) {
            float in = std::fmod(phase, 10.0f), run = std::min(len - t, in < 6 ? 6 - in : 10 - in);
            if (in < 6) {
                ImVec2 u(p.x + (q.x - p.x) * t / len, p.y + (q.y - p.y) * t / len);
                ImVec2 v(p.x + (q.x - p.x) * (t + run) / len, p.y + (q.y - p.y) * (t + run) / len);
                dl->AddLine(u, v, col, thickness);
            }
            t += run, phase += run;
        }
    }
}

// A colour swatch and its label, on the line so far if they fit (16 + 2 px of swatch before the text).
static void legend_item(ImU32 col, const char* label, float gap = 12) {
    ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(gap, ImGui::GetStyle().ItemSpacing.y));
    same_line_if_fits(18 + ImGui::CalcTextSize(label).x);
    ImGui::PopStyleVar();
    ImVec2 p = ImGui::GetCursorScreenPos();
    float h = ImGui::GetTextLineHeight();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + h * 0.35f), ImVec2(p.x + 14, p.y + h * 0.65f), col);
    ImGui::Dummy(ImVec2(16, h));
    ImGui::SameLine(0, 2);
    ImGui::TextUnformatted(label);
}

void draw_loss(LossState& st, const Snapshot& snap, PanelLayout& layout) {
    take_finished_runs(st, snap);
    layout.ghost_names.clear();
    for (const Ghost& g : st.ghosts) layout.ghost_names.push_back(g.name);
    ImGui::Checkbox("log y", &st.log_y);
    same_line_if_fits(labelled_width(ImGui::GetFrameHeight(), "all lecture refs"));
    ImGui::Checkbox("all lecture refs", &st.all_refs);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Every preset's val loss from the lecture (the nanogpt presets': nanoGPT's README), faint; "
                          "the current one bold");
    same_line_if_fits(labelled_width(ImGui::GetFrameHeight(), "in-context"));
    st.icl_toggled = ImGui::Checkbox("in-context", &st.icl);
    layout.icl_checkbox = visible_rect();
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("The in-context learning score at every recorded step (its own scale, lower part of the "
                          "plot): the validation loss early in the block (around T/10) minus late (the last tenth); "
                          "it jumps when an induction head forms. Hover the plot for the loss by position "
                          "(docs/circuits.md)");
    if (st.icl && !snap.icl_note.empty()) {
        same_line_if_fits(ImGui::CalcTextSize(snap.icl_note.c_str()).x);
        ImGui::TextDisabled("%s", snap.icl_note.c_str());
    }
    legend_item(k_train_colour, "train estimate", 16);
    legend_item(k_val_colour, "val estimate");
    legend_item(IM_COL32(170, 170, 185, 200), "per step");
    if (ImGui::Button("Export CSV")) {
        std::string err = write_loss_csv(snap, st.csv_path);
        st.csv_message = err.empty() ? "wrote " + st.csv_path : err;
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(180);
    ImGui::InputText("##csv", &st.csv_path);
    if (!st.csv_message.empty()) {
        ImGui::SameLine();
        ImGui::TextDisabled("%s", st.csv_message.c_str());
    }

    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 p0 = ImGui::GetCursorScreenPos(), avail = ImGui::GetContentRegionAvail();
    float list_h = 0;
    if (!st.ghosts.empty()) {
        float row = ImGui::GetFrameHeightWithSpacing();
        list_h = std::min(avail.y * 0.4f, row * (1 + std::min<float>(3, float(st.ghosts.size()))) + 4);
        avail.y -= list_h;
    }
    const float left = 46, bottom = 20;
    ImVec2 a(p0.x + left, p0.y + 4), b(p0.x + avail.x - 6, p0.y + avail.y - bottom);
    if (b.x - a.x < 40 || b.y - a.y < 30) {
        if (list_h > 0) draw_ghost_list(st, list_h);
        return;
    }
    bool clicked = ImGui::InvisibleButton("##lossplot", avail);
    bool hovered = ImGui::IsItemHovered();
    add_opaque_fill(dl, a, b, k_bg_colour);  // a clear, not triangles: this panel is drawn again every step
    ImVec2 fb = ImGui::GetIO().DisplayFramebufferScale;
    layout.loss_plot = ImVec4(a.x * fb.x, a.y * fb.y, (b.x - a.x) * fb.x, (b.y - a.y) * fb.y);
    layout.train_colour = k_train_colour;
    layout.val_colour = k_val_colour;
    layout.plot_bg_colour = k_bg_colour;

    const auto& raw = snap.step_losses;
    // the lecture's values: only on its corpus (tiny Shakespeare, by content), the current stage's by default
    // the preset's reference only for its own model on its own corpus (not an imported run of another size)
    const double ref_own = snap.lecture_corpus ? snap.cfg.reference_val_loss() : 0;
    std::vector<std::pair<std::string, double>> refs;  // shown: the current preset's first
    if (ref_own > 0) refs.push_back({snap.cfg.preset, ref_own});
    if (snap.lecture_corpus && st.all_refs)
        for (const std::string& name : Config::preset_names())
            if (double v = Config::lecture_val_loss(name); v > 0 && name != snap.cfg.preset) refs.push_back({name, v});
    // Earlier runs widen the x axis only up to this run's max iters: a 5000-step ghost does not squeeze a 500-step
    // run into the plot's left tenth (the ghost is cut at the right edge instead, and its cut part sets no y range)
    std::vector<double> estimates, ref_values;
    for (auto& e : snap.evals) estimates.push_back(e.train), estimates.push_back(e.val);
    int ghost_xmax = 0, cut = snap.cfg.max_iters > 0 ? snap.cfg.max_iters : INT_MAX;
    for (const Ghost& g : st.ghosts)
        if (g.visible && !g.evals.empty()) {
            for (auto& e : g.evals)
                if (e.step > 0 && e.step <= cut) estimates.push_back(e.train), estimates.push_back(e.val);
            ghost_xmax = std::max(ghost_xmax, std::min(g.evals.back().step, cut));
        }
    for (auto& r : refs) ref_values.push_back(r.second);
    AxisRange yr = loss_y_range(raw, estimates, ref_values, st.log_y);
    const double lo = yr.lo, hi = yr.hi;
    int xmax = std::max({1, int(raw.size()), snap.evals.empty() ? 0 : snap.evals.back().step, ghost_xmax});
    // the x view: all steps, or what the wheel zoomed to and a drag moved (double-click: all again)
    double x0 = 0, x1 = xmax;
    if (st.view_hi > st.view_lo) x0 = std::max(0.0, st.view_lo), x1 = std::min(double(xmax), st.view_hi);
    if (x1 - x0 < 4) x0 = 0, x1 = xmax, st.view_lo = st.view_hi = 0;
    auto ty = [&](double v) { return st.log_y ? std::log(std::max(v, 1e-6)) : v; };
    double tlo = ty(lo), thi = ty(hi);
    auto px = [&](double step) { return a.x + float((step - x0) / (x1 - x0)) * (b.x - a.x); };
    auto py = [&](double v) { return b.y - float((ty(v) - tlo) / (thi - tlo)) * (b.y - a.y); };
    auto step_at = [&](float x) { return x0 + double(x - a.x) / double(b.x - a.x) * (x1 - x0); };
    if (hovered) {  // wheel: zoom on x around the pointer; drag: move along x; double-click: every step again
        ImGuiIO& io = ImGui::GetIO();
        if (io.MouseWheel != 0) {
            double at = step_at(io.MousePos.x), f = std::pow(0.8, io.MouseWheel);
            st.view_lo = std::max(0.0, at - (at - x0) * f);
            st.view_hi = std::min(double(xmax), at + (x1 - at) * f);
        }
        if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) st.view_lo = st.view_hi = 0;
    }
    if (ImGui::IsItemActivated()) st.dragged = false;
    if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 4)) {
        st.dragged = true;
        double dx = double(ImGui::GetIO().MouseDelta.x) / double(b.x - a.x) * (x1 - x0);
        double w = x1 - x0, nlo = std::clamp(x0 - dx, 0.0, double(xmax) - w);
        st.view_lo = nlo, st.view_hi = nlo + w;
    }

    // grid and tick labels
    dl->PushClipRect(ImVec2(p0.x, p0.y), ImVec2(p0.x + avail.x, p0.y + avail.y), true);
    for (double v : axis_ticks(lo, hi, st.log_y, 5)) {
        float y = py(v);
        dl->AddLine(ImVec2(a.x, y), ImVec2(b.x, y), k_grid_colour);
        dl->AddText(ImVec2(p0.x + 2, y - 7), IM_COL32(170, 170, 180, 255), compact_number(v).c_str());
    }
    for (double sx : axis_ticks(x0, x1, false, 6)) {
        if (sx != std::floor(sx)) continue;  // steps are whole numbers
        float x = px(sx);
        dl->AddLine(ImVec2(x, a.y), ImVec2(x, b.y), k_grid_colour);
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", sx);
        // centred on its line, kept inside the panel (the last tick sits on the right edge)
        float w = ImGui::CalcTextSize(buf).x, tx = std::min(x - w / 2, p0.x + avail.x - w - 2);
        dl->AddText(ImVec2(std::max(tx, p0.x), b.y + 3), IM_COL32(170, 170, 180, 255), buf);
    }
    dl->PopClipRect();
    dl->PushClipRect(a, b, true);

    // raw per-step loss in view, averaged into at most one point per pixel column; a value above the axis is drawn
    // at the top edge with a mark (the y range leaves spikes out)
    int cols = std::max(1, int(b.x - a.x));
    std::vector<ImVec2> pts, curve_pts;  // curve_pts: every curve point, for placing labels off the curves
    size_t n = raw.size();
    size_t first = size_t(std::max(0.0, std::floor(x0) - 1)), last = std::min(n, size_t(std::ceil(x1)));
    size_t per = std::max<size_t>(1, (last - std::min(first, last) + cols - 1) / cols);
    for (size_t i = first; i < last; i += per) {
        double sum = 0, peak = 0;
        size_t k = 0;
        for (size_t j = i; j < std::min(last, i + per); j++)
            if (std::isfinite(raw[j])) sum += raw[j], k++, peak = std::max(peak, double(raw[j]));
        if (!k) continue;
        ImVec2 p(px(i + 1 + (per - 1) * 0.5), py(std::min(sum / k, hi)));
        pts.push_back(p);
        if (peak > hi) dl->AddTriangleFilled(ImVec2(p.x - 3, a.y + 6), ImVec2(p.x + 3, a.y + 6), ImVec2(p.x, a.y), k_spike_colour);
    }
    if (pts.size() > 1) dl->AddPolyline(pts.data(), int(pts.size()), k_raw_colour, 0, 1.0f);
    curve_pts = pts;

    // reference lines: the current preset's bold, the others faint (their labels come after the curves)
    for (size_t r = 0; r < refs.size(); r++) {
        float y = py(refs[r].second);
        if (y < a.y - 1 || y > b.y + 1) continue;
        if (r == 0 && ref_own > 0) dashed_hline(dl, a.x, b.x, y, k_ref_colour);
        else
            for (float x = a.x; x < b.x; x += 8) dl->AddLine(ImVec2(x, y), ImVec2(std::min(x + 3, b.x), y), k_ref_faint, 1.0f);
    }

    // earlier runs: val solid, train faint, both thinner than the current run
    for (const Ghost& g : st.ghosts) {
        if (!g.visible || g.evals.size() < 2) continue;
        for (int which = 0; which < 2; which++) {
            pts.clear();
            size_t gn = g.evals.size(), gper = std::max<size_t>(1, (gn + cols - 1) / cols);
            for (size_t i = 0; i < gn; i += gper) {
                const EvalPoint& e = g.evals[i];
                pts.push_back(ImVec2(px(e.step), py(which == 0 ? e.train : e.val)));
            }
            const EvalPoint& lastp = g.evals.back();
            if ((gn - 1) % gper) pts.push_back(ImVec2(px(lastp.step), py(which == 0 ? lastp.train : lastp.val)));
            dl->AddPolyline(pts.data(), int(pts.size()), ghost_colour(g.id, which == 0 ? 70 : 190), 0,
                            which == 0 ? 1.0f : 1.5f);
        }
        ImVec2 end(px(g.evals.back().step), py(g.evals.back().val));
        dl->AddCircleFilled(end, 3.0f, ghost_colour(g.id, 220));
    }

    // estimates, thinned when there are more than pixel columns: val solid and thick, train dashed over it (the two
    // often coincide: the dashes let both be seen)
    size_t ne = snap.evals.size(), eper = std::max<size_t>(1, (ne + cols - 1) / cols);
    for (int which = 1; which >= 0; which--) {
        ImU32 col = which == 0 ? k_train_colour : k_val_colour;
        pts.clear();
        for (size_t i = 0; i < ne; i += eper) {
            const EvalPoint& e = snap.evals[i];
            pts.push_back(ImVec2(px(e.step), py(std::min(which == 0 ? e.train : e.val, hi))));
        }
        if (ne && (ne - 1) % eper) {
            const EvalPoint& e = snap.evals.back();
            pts.push_back(ImVec2(px(e.step), py(std::min(which == 0 ? e.train : e.val, hi))));
        }
        curve_pts.insert(curve_pts.end(), pts.begin(), pts.end());
        if (which == 1 && pts.size() > 1) dl->AddPolyline(pts.data(), int(pts.size()), col, 0, 3.0f);
        if (which == 0) dashed_polyline(dl, pts, col, 1.5f);
        if (pts.size() < size_t(cols) / 6)
            for (auto& p : pts) dl->AddCircleFilled(p, which == 1 ? 3.5f : 2.5f, col);
    }

    // the references' labels, on top: where no curve and no other label is (left, middle or right of the line,
    // above or below it), on a dark box
    std::vector<ImVec4> taken;  // label rectangles drawn
    for (size_t r = 0; r < refs.size(); r++) {
        bool own = r == 0 && ref_own > 0;
        float y = py(refs[r].second);
        if (y < a.y - 1 || y > b.y + 1) continue;
        char buf[64];
        if (own) std::snprintf(buf, sizeof buf, "%s %.2f (%s)", refs[r].first.c_str(), refs[r].second,
                               Config::reference_source(refs[r].first));
        else std::snprintf(buf, sizeof buf, "%s %.2f", refs[r].first.c_str(), refs[r].second);
        ImVec2 ts = ImGui::CalcTextSize(buf);
        auto clear_of = [&](float lx, float ly) {
            for (auto& t : taken)
                if (lx < t.z && lx + ts.x > t.x && ly < t.w && ly + ts.y > t.y) return false;
            for (auto& p : curve_pts)
                if (p.x >= lx - 2 && p.x <= lx + ts.x + 2 && p.y >= ly - 3 && p.y <= ly + ts.y + 3) return false;
            return true;
        };
        bool placed = false;
        ImVec2 at;
        for (float lx : {a.x + 4, (a.x + b.x - ts.x) / 2, b.x - ts.x - 4}) {
            for (float ly : {y - ts.y - 1, y + 1}) {
                ly = std::clamp(ly, a.y + 1, b.y - ts.y - 1);  // never cut off at the plot's edge
                if (clear_of(lx, ly)) {
                    at = ImVec2(lx, ly), placed = true;
                    break;
                }
            }
            if (placed) break;
        }
        if (!placed) {
            if (!own) continue;  // a faint reference's label only where it is free
            at = ImVec2(b.x - ts.x - 4, std::clamp(y - ts.y - 1, a.y + 1, b.y - ts.y - 1));
        }
        taken.push_back(ImVec4(at.x, at.y, at.x + ts.x, at.y + ts.y));
        dl->AddRectFilled(ImVec2(at.x - 2, at.y), ImVec2(at.x + ts.x + 2, at.y + ts.y), IM_COL32(22, 22, 28, 200));
        dl->AddText(at, own ? k_ref_colour : IM_COL32(200, 200, 120, 160), buf);
    }

    // where the strongest induction head formed (the Heads view: its score's largest rise between recorded steps),
    // a dashed orange line
    layout.induction_rise = snap.induction_rise_step;
    if (int is = snap.induction_rise_step; is >= 0 && is >= x0 && is <= x1) {
        float x = std::max(px(is), a.x + 2.0f);
        for (float y = a.y; y < b.y; y += 8) dl->AddLine(ImVec2(x, y), ImVec2(x, std::min(y + 4, b.y)), k_induction_colour, 1.5f);
        float w = ImGui::CalcTextSize("induction").x;
        dl->AddText(ImVec2(std::min(x + 3, b.x - w - 2), b.y - 18), k_induction_colour, "induction");
    }
    // in-context learning: its score at each recorded step, on its own scale in the plot's lower part
    layout.icl_points = 0;
    const bool icl_shown = st.icl && !snap.icl_scores.empty() && snap.icl_steps.size() == snap.icl_scores.size();
    if (icl_shown) {
        double lo_s = 0, hi_s = 1e-6;
        for (double v : snap.icl_scores) lo_s = std::min(lo_s, v), hi_s = std::max(hi_s, v);
        const float y0 = b.y - 4, y1 = a.y + (b.y - a.y) * 0.5f;
        auto py = [&](double v) { return y0 + (y1 - y0) * float((v - lo_s) / (hi_s - lo_s)); };
        ImVec2 prev;
        for (size_t i = 0; i < snap.icl_steps.size(); i++) {
            if (snap.icl_steps[i] < x0 || snap.icl_steps[i] > x1) continue;
            ImVec2 p(std::max(px(snap.icl_steps[i]), a.x + 2.0f), py(snap.icl_scores[i]));
            if (layout.icl_points > 0) dl->AddLine(prev, p, k_icl_colour, 1.5f);
            dl->AddCircleFilled(p, 2.5f, k_icl_colour);
            prev = p;
            layout.icl_points++;
            layout.icl_last = snap.icl_scores[i];
        }
        if (layout.icl_points > 0) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "ICL %+.2f", layout.icl_last);
            float w = ImGui::CalcTextSize(buf).x;
            dl->AddText(ImVec2(std::min(prev.x + 4, b.x - w - 2), std::max(prev.y - 16, a.y)), k_icl_colour, buf);
        }
    }
    // the time-lapse's scrubbed step (Attention panel, probe view): a vertical cursor
    layout.loss_cursor_x = -1;
    if (st.cursor_step >= 0 && st.cursor_step >= x0 && st.cursor_step <= x1) {
        // early steps sit on the axis itself: kept 2 px inside it, with a marker above, so step 0 still shows
        float x = std::max(px(st.cursor_step), a.x + 2.0f);
        dl->AddLine(ImVec2(x, a.y), ImVec2(x, b.y), k_cursor_colour, 2.0f);
        dl->AddTriangleFilled(ImVec2(x - 5, a.y), ImVec2(x + 5, a.y), ImVec2(x, a.y + 7), k_cursor_colour);
        char buf[32];
        std::snprintf(buf, sizeof buf, "step %d", st.cursor_step);
        float w = ImGui::CalcTextSize(buf).x;
        dl->AddText(ImVec2(std::min(x + 3, b.x - w - 2), a.y + 8), k_cursor_colour, buf);
        layout.loss_cursor_x = x * fb.x;
    }
    dl->PopClipRect();
    layout.loss_y_lo = float(lo);
    layout.loss_y_hi = float(hi);

    // a click (not a drag) on the plot: the time-lapse jumps to the recorded step nearest it (the window forwards
    // clicked_step)
    st.clicked_step = -1;
    if (clicked && !st.dragged && xmax > 0)
        st.clicked_step = std::clamp(int(std::lround(step_at(ImGui::GetIO().MousePos.x))), 0, xmax);

    if (hovered && xmax > 0) {
        float mx = ImGui::GetIO().MousePos.x;
        int s = std::clamp(int(std::lround(step_at(mx))), 0, xmax);
        dl->AddLine(ImVec2(px(s), a.y), ImVec2(px(s), b.y), IM_COL32(255, 255, 255, 90));
        ImGui::BeginTooltip();
        ImGui::Text("step %d", s);
        if (s >= 1 && s <= int(n)) ImGui::Text("train loss this step: %.4f", raw[s - 1]);
        const EvalPoint* best = nullptr;
        for (auto& e : snap.evals)
            if (!best || std::abs(e.step - s) < std::abs(best->step - s)) best = &e;
        if (best) ImGui::Text("estimate at step %d: train %.4f, val %.4f", best->step, best->train, best->val);
        for (const Ghost& g : st.ghosts) {
            if (!g.visible || g.evals.empty()) continue;
            const EvalPoint* gb = nullptr;
            for (auto& e : g.evals)
                if (!gb || std::abs(e.step - s) < std::abs(gb->step - s)) gb = &e;
            ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ghost_colour(g.id, 255)), "%s @%d: val %.4f", g.name.c_str(),
                               gb->step, gb->val);
        }
        if (icl_shown && snap.icl_curves.size() == snap.icl_steps.size()) {
            size_t k = 0;
            for (size_t i = 0; i < snap.icl_steps.size(); i++)
                if (std::abs(snap.icl_steps[i] - s) < std::abs(snap.icl_steps[k] - s)) k = i;
            const std::vector<float>& c = snap.icl_curves[k];
            ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(k_icl_colour), "in-context score at step %d: %+.3f",
                               snap.icl_steps[k], snap.icl_scores[k]);
            char overlay[64];
            std::snprintf(overlay, sizeof overlay, "loss by position, 0 to %zu", c.size() - 1);
            ImGui::PlotLines("##by position", c.data(), int(c.size()), 0, overlay, FLT_MAX, FLT_MAX, ImVec2(260, 70));
        }
        ImGui::TextDisabled("click: the attention time-lapse at the recorded step nearest here");
        ImGui::TextDisabled("wheel: zoom on steps, drag: move, double-click: every step");
        ImGui::EndTooltip();
    }
    if (list_h > 0) draw_ghost_list(st, list_h);
}

}  // namespace attn
