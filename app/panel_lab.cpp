// Lab window: the seven self-attention demos (engine/lab), computed by compute shaders on the window's device.
// Each demo shows its explanation, live controls, and its numbers as tables, heatmaps, bars and histograms.
#include "panel_lab.h"

#include <imgui.h>
#include <imgui_internal.h>  // BringWindowToDisplayFront: the Lab floats above the fixed dashboard
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <utility>

#include "lab/lab_registry.h"
#include "panels.h"

namespace attn {

namespace {

using lab::Matrix;
using Clock = std::chrono::steady_clock;

const ImVec4 k_error_colour{1.0f, 0.45f, 0.4f, 1.0f};
const ImVec4 k_good_colour{0.45f, 0.9f, 0.45f, 1.0f};
const ImVec4 k_bad_colour{1.0f, 0.6f, 0.3f, 1.0f};
const ImU32 k_masked_colour = IM_COL32(78, 78, 86, 255);
const ImU32 k_bar_colour = IM_COL32(86, 156, 230, 255);
const ImU32 k_bar2_colour = IM_COL32(240, 170, 60, 255);
const ImU32 k_axis_colour = IM_COL32(140, 140, 150, 255);
constexpr auto k_scaling_period = std::chrono::milliseconds(150);  // at most ~7 recomputes a second while dragging

// Viridis at 9 stops, as the Attention panel draws weights: dark purple (0) to yellow (1).
constexpr float k_viridis[9][3] = {{68, 1, 84},    {71, 44, 122},  {59, 81, 139},  {44, 113, 142}, {33, 144, 141},
                                   {39, 173, 129}, {92, 200, 99}, {170, 220, 50}, {253, 231, 37}};

ImU32 colormap(float t) {
    t = std::clamp(std::isfinite(t) ? t : 0.0f, 0.0f, 1.0f) * 8.0f;
    int i = std::min(int(t), 7);
    float f = t - i;
    auto mix = [&](int c) { return int(k_viridis[i][c] + f * (k_viridis[i + 1][c] - k_viridis[i][c]) + 0.5f); };
    return IM_COL32(mix(0), mix(1), mix(2), 255);
}

void error_text(const std::string& e) {
    if (e.empty()) return;
    ImGui::PushStyleColor(ImGuiCol_Text, k_error_colour);
    ImGui::TextWrapped("%s", e.c_str());
    ImGui::PopStyleColor();
}

void heading(const char* s) {
    ImGui::Spacing();
    ImGui::TextDisabled("%s", s);
    ImGui::Separator();
}

// After a change, computes a demo on the Lab's worker thread (the queue may be busy with a long training step, and
// the window must stay responsive): `run` computes there and returns the result; `store(result)` keeps it, on the UI
// thread when the worker is collected. An engine error (bad input, device trouble) becomes `error`, shown under the
// controls. Returns whether it started (not while the worker is still busy with an earlier change).
template <typename Run, typename Store>
bool compute(LabState& st, bool& dirty, std::string& error, Run run, Store store) {
    if (!dirty || st.worker.busy()) return false;
    dirty = false;
    std::string* err = &error;
    bool ok = st.worker.start([run, store, err]() -> std::function<void()> {
        try {
            auto r = run();
            return [r, store, err] {
                store(r);
                err->clear();
            };
        } catch (const std::exception& e) {
            std::string msg = e.what();
            return [msg, err] { *err = msg; };
        }
    });
    if (!ok) error = "cannot start the Lab's worker thread (out of resources?); change a value to try again";
    return ok;
}

std::string visible(const std::string& s) {
    std::string o;
    for (char c : s) o += c == '\n' ? std::string("\\n") : std::string(1, c);
    return o;
}

// The characters of `s` as heatmap labels.
std::vector<std::string> labels_of(const std::string& s) {
    std::vector<std::string> v;
    for (char c : s) v.push_back(visible_char(std::string(1, c)));
    return v;
}

// A matrix as a bordered table of numbers, sized to its columns.
void matrix_table(const char* id, const Matrix& m, const char* fmt = "%.4f") {
    if (m.rows <= 0 || m.cols <= 0 || m.cols > 64) return;
    ImGuiTableFlags fl = ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoHostExtendX;
    if (!ImGui::BeginTable(id, m.cols, fl)) return;
    for (int r = 0; r < m.rows; r++) {
        ImGui::TableNextRow();
        for (int c = 0; c < m.cols; c++) {
            ImGui::TableSetColumnIndex(c);
            ImGui::Text(fmt, m.at(r, c));
        }
    }
    ImGui::EndTable();
}

// "title" above a table, as one group (so groups can sit side by side).
void titled_matrix(const char* title, const char* id, const Matrix& m, const char* fmt = "%.4f") {
    ImGui::BeginGroup();
    ImGui::TextUnformatted(title);
    matrix_table(id, m, fmt);
    ImGui::EndGroup();
}

// Big operator glyph between side-by-side matrices.
void op_between(const char* op) {
    ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::Dummy(ImVec2(0, ImGui::GetTextLineHeightWithSpacing() * 1.5f));
    ImGui::TextUnformatted(op);
    ImGui::EndGroup();
    ImGui::SameLine();
}

// A (T,T) weight matrix as a heatmap: colour = weight / the largest weight, masked future in grey when `causal`,
// values printed in big cells, characters along both axes when given, the value under the mouse as a tooltip.
void heatmap(const char* id, const Matrix& m, float cell, bool causal, const std::vector<std::string>& row_chars = {},
             const std::vector<std::string>& col_chars = {}) {
    if (m.rows <= 0 || m.cols <= 0) return;
    float vmax = 0;
    for (float v : m.v) vmax = std::max(vmax, std::isfinite(v) ? v : 0.0f);
    if (vmax <= 0) vmax = 1;
    const bool labels = !row_chars.empty() || !col_chars.empty();
    const float lw = labels ? 18.0f : 0.0f, lh = labels ? ImGui::GetTextLineHeight() + 2 : 0.0f;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImVec2 g(p0.x + lw, p0.y + lh);
    ImGui::InvisibleButton(id, ImVec2(lw + cell * m.cols, lh + cell * m.rows));
    bool hovered = ImGui::IsItemHovered();
    float gap = cell >= 8 ? 1.0f : 0.0f;
    for (int i = 0; i < m.rows; i++)
        for (int j = 0; j < m.cols; j++) {
            bool masked = causal && j > i;
            float w = m.at(i, j);
            ImVec2 a(g.x + j * cell, g.y + i * cell), b(a.x + cell - gap, a.y + cell - gap);
            dl->AddRectFilled(a, b, masked ? k_masked_colour : colormap(w / vmax));
            if (!masked && cell >= 34) {
                char buf[16];
                std::snprintf(buf, sizeof buf, "%.2f", w);
                ImVec2 ts = ImGui::CalcTextSize(buf);
                dl->AddText(ImVec2(a.x + (cell - ts.x) * 0.5f, a.y + (cell - ts.y) * 0.5f),
                            w / vmax > 0.6f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 230), buf);
            }
        }
    ImU32 label_colour = ImGui::GetColorU32(ImGuiCol_Text);
    for (int i = 0; i < m.rows && i < int(row_chars.size()); i++) {
        const std::string& s = row_chars[i];
        ImVec2 ts = ImGui::CalcTextSize(s.c_str());
        dl->AddText(ImVec2(p0.x + (lw - ts.x) * 0.5f, g.y + i * cell + (cell - ts.y) * 0.5f), label_colour, s.c_str());
    }
    for (int j = 0; j < m.cols && j < int(col_chars.size()); j++) {
        const std::string& s = col_chars[j];
        ImVec2 ts = ImGui::CalcTextSize(s.c_str());
        dl->AddText(ImVec2(g.x + j * cell + (cell - ts.x) * 0.5f, p0.y), label_colour, s.c_str());
    }
    if (hovered) {
        ImVec2 mp = ImGui::GetIO().MousePos;
        int i = int(std::floor((mp.y - g.y) / cell)), j = int(std::floor((mp.x - g.x) / cell));
        if (i >= 0 && j >= 0 && i < m.rows && j < m.cols)
            ImGui::SetTooltip("row (query) %d, column (key) %d: %.4f%s", i, j, m.at(i, j),
                              causal && j > i ? " (masked: the future)" : "");
    }
}

// A cell size that fits `n` cells into `width` pixels, between 10 and 44.
float cell_for(int n, float width) { return std::clamp(std::floor(width / std::max(n, 1)), 10.0f, 44.0f); }

// Vertical bars of values in [0, 1], one group per index: `a` and optionally `b` side by side, labels below.
void bars(const char* id, const std::vector<float>& a, const std::vector<float>* b, const std::vector<std::string>& labels,
          float height) {
    size_t n = a.size();
    if (n == 0) return;
    float group = std::clamp(ImGui::GetContentRegionAvail().x / float(n), 24.0f, 90.0f);
    float bar = b ? group * 0.36f : group * 0.6f;
    float text_h = ImGui::GetTextLineHeight();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 p0 = ImGui::GetCursorScreenPos();
    float base = p0.y + text_h + height;  // value labels above, names below
    ImGui::InvisibleButton(id, ImVec2(group * n, height + 2 * text_h + 6));
    bool hovered = ImGui::IsItemHovered();
    dl->AddLine(ImVec2(p0.x, base), ImVec2(p0.x + group * n, base), k_axis_colour);
    auto one = [&](float x, float v, ImU32 col) {
        float h = std::clamp(std::isfinite(v) ? v : 0.0f, 0.0f, 1.0f) * height;
        dl->AddRectFilled(ImVec2(x, base - h), ImVec2(x + bar, base), col);
        char buf[16];
        std::snprintf(buf, sizeof buf, "%.2f", v);
        const char* t = buf[0] == '0' && buf[1] == '.' ? buf + 1 : buf;  // ".25": narrow enough for thin bars
        if (std::strcmp(buf, "1.00") == 0) t = "1";
        ImVec2 ts = ImGui::CalcTextSize(t);
        if (ts.x <= bar + 8) dl->AddText(ImVec2(x + (bar - ts.x) * 0.5f, base - h - text_h), ImGui::GetColorU32(ImGuiCol_Text), t);
    };
    for (size_t i = 0; i < n; i++) {
        float x = p0.x + group * i + (group - (b ? 2 * bar + 2 : bar)) * 0.5f;
        if (b) {
            one(x, (*b)[i], k_bar_colour);
            one(x + bar + 2, a[i], k_bar2_colour);
        } else {
            one(x, a[i], k_bar_colour);
        }
        if (i < labels.size()) {
            ImVec2 ts = ImGui::CalcTextSize(labels[i].c_str());
            dl->AddText(ImVec2(p0.x + group * i + (group - ts.x) * 0.5f, base + 3), ImGui::GetColorU32(ImGuiCol_TextDisabled),
                        labels[i].c_str());
        }
    }
    if (hovered) {
        int i = int((ImGui::GetIO().MousePos.x - p0.x) / group);
        if (i >= 0 && size_t(i) < n) {
            if (b) ImGui::SetTooltip("%s: %.4f (blue) and %.4f (orange)", i < int(labels.size()) ? labels[i].c_str() : "",
                                     (*b)[i], a[i]);
            else ImGui::SetTooltip("%s: %.4f", i < int(labels.size()) ? labels[i].c_str() : "", a[i]);
        }
    }
}

// A histogram of counts over [lo, hi) with the axis ends labelled.
void histogram(const char* id, const char* title, const std::vector<int>& h, float lo, float hi, ImVec2 size, ImU32 colour) {
    ImGui::BeginGroup();
    ImGui::TextUnformatted(title);
    int mx = 1;
    for (int c : h) mx = std::max(mx, c);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton(id, size);
    bool hovered = ImGui::IsItemHovered();
    float text_h = ImGui::GetTextLineHeight();
    float plot_h = size.y - text_h - 4, base = p0.y + plot_h;
    dl->AddRectFilled(p0, ImVec2(p0.x + size.x, base), IM_COL32(30, 30, 36, 255));
    size_t n = h.size();
    float bw = n ? size.x / float(n) : size.x;
    for (size_t i = 0; i < n; i++) {
        float bh = float(h[i]) / mx * (plot_h - 2);
        dl->AddRectFilled(ImVec2(p0.x + bw * i + 1, base - bh), ImVec2(p0.x + bw * (i + 1) - 1, base), colour);
    }
    dl->AddLine(ImVec2(p0.x, base), ImVec2(p0.x + size.x, base), k_axis_colour);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", lo);
    dl->AddText(ImVec2(p0.x, base + 2), ImGui::GetColorU32(ImGuiCol_TextDisabled), buf);
    std::snprintf(buf, sizeof buf, "%.1f", hi);
    ImVec2 ts = ImGui::CalcTextSize(buf);
    dl->AddText(ImVec2(p0.x + size.x - ts.x, base + 2), ImGui::GetColorU32(ImGuiCol_TextDisabled), buf);
    std::snprintf(buf, sizeof buf, "0");
    ts = ImGui::CalcTextSize(buf);
    float zx = hi > lo ? p0.x + (0 - lo) / (hi - lo) * size.x : p0.x;
    if (zx > p0.x + 30 && zx < p0.x + size.x - 30) {
        dl->AddLine(ImVec2(zx, p0.y), ImVec2(zx, base), IM_COL32(140, 140, 150, 90));
        dl->AddText(ImVec2(zx - ts.x * 0.5f, base + 2), ImGui::GetColorU32(ImGuiCol_TextDisabled), buf);
    }
    if (hovered && n > 0) {
        int i = int((ImGui::GetIO().MousePos.x - p0.x) / bw);
        if (i >= 0 && size_t(i) < n) {
            float w = (hi - lo) / float(n);
            ImGui::SetTooltip("[%.2f, %.2f): %d scores", lo + w * i, lo + w * (i + 1), h[i]);
        }
    }
    ImGui::EndGroup();
}

// --- 1. matmul ---
void draw_matmul(LabState& st, Context& ctx) {
    lab::MatmulDemoInput& in = st.matmul_in;
    bool& dirty = st.matmul_dirty;
    ImGui::TextUnformatted("a =");
    ImGui::SameLine();
    if (ImGui::RadioButton("ones(K, K)", in.a_mode == lab::TrilMode::Ones)) in.a_mode = lab::TrilMode::Ones, dirty = true;
    ImGui::SameLine();
    if (ImGui::RadioButton("tril(ones)", in.a_mode == lab::TrilMode::Tril)) in.a_mode = lab::TrilMode::Tril, dirty = true;
    ImGui::SameLine();
    if (ImGui::RadioButton("tril(ones) / row sums", in.a_mode == lab::TrilMode::TrilAverage))
        in.a_mode = lab::TrilMode::TrilAverage, dirty = true;

    // b: editable cells, rows K (a is K x K) and columns N
    Matrix& b = in.b;
    ImGui::TextUnformatted("b (edit the numbers):");
    ImGui::SameLine();
    if (ImGui::SmallButton("+ row") && b.rows < 8) {
        b.v.resize(size_t(b.rows + 1) * b.cols, 1.0f);
        b.rows++;
        dirty = true;
    }
    ImGui::SameLine();
    if (ImGui::SmallButton("- row") && b.rows > 1) {
        b.rows--;
        b.v.resize(size_t(b.rows) * b.cols);
        dirty = true;
    }
    ImGui::SameLine();
    if (ImGui::SmallButton("+ col") && b.cols < 6) {
        Matrix nb(b.rows, b.cols + 1);
        for (int r = 0; r < b.rows; r++)
            for (int c = 0; c <= b.cols; c++) nb.v[size_t(r) * nb.cols + c] = c < b.cols ? b.at(r, c) : 1.0f;
        b = nb;
        dirty = true;
    }
    ImGui::SameLine();
    if (ImGui::SmallButton("- col") && b.cols > 1) {
        Matrix nb(b.rows, b.cols - 1);
        for (int r = 0; r < b.rows; r++)
            for (int c = 0; c < nb.cols; c++) nb.v[size_t(r) * nb.cols + c] = b.at(r, c);
        b = nb;
        dirty = true;
    }
    ImGui::SameLine();
    if (ImGui::SmallButton("lecture's b")) in.b = lab::MatmulDemoInput{}.b, dirty = true;
    for (int r = 0; r < b.rows; r++)
        for (int c = 0; c < b.cols; c++) {
            ImGui::PushID(r * 16 + c);
            if (c > 0) ImGui::SameLine();
            ImGui::SetNextItemWidth(64);
            float& v = b.v[size_t(r) * b.cols + c];
            if (ImGui::InputFloat("##b", &v, 0, 0, "%.3g")) {
                if (!std::isfinite(v)) v = 0;
                dirty = true;
            }
            ImGui::PopID();
        }
    KernelCache* kc = st.kc.get();
    compute(st, dirty, st.matmul_error, [&ctx, kc, in] { return lab::run_matmul_demo(ctx, *kc, in); },
            [d = &st.matmul](const lab::MatmulDemo& r) { *d = r; });
    error_text(st.matmul_error);
    if (!st.matmul_error.empty() || st.matmul.c.rows == 0) return;
    heading("c = a @ b, computed by the lab_tril and lab_matmul shaders");
    titled_matrix("a", "##a", st.matmul.a);
    op_between("@");
    titled_matrix("b", "##bb", st.matmul.b, "%.4g");
    op_between("=");
    titled_matrix("c", "##c", st.matmul.c);
    ImGui::Spacing();
    const char* what = in.a_mode == lab::TrilMode::Ones ? "every row of c is the sum of all rows of b"
                       : in.a_mode == lab::TrilMode::Tril ? "row i of c sums rows 0..i of b: only the past and present"
                                                          : "row i of c is the average of rows 0..i of b";
    ImGui::TextWrapped("Here %s.", what);
}

// --- 2. average ---
void draw_average(LabState& st, Context& ctx) {
    lab::AverageDemoInput& in = st.average_in;
    bool& dirty = st.average_dirty;
    ImGui::PushItemWidth(80);
    ImGui::TextUnformatted("x = randn(B, T, C):");
    ImGui::SameLine();
    dirty |= ImGui::InputInt("B", &in.B, 0);
    ImGui::SameLine();
    dirty |= ImGui::InputInt("T", &in.T, 0);
    ImGui::SameLine();
    dirty |= ImGui::InputInt("C", &in.C, 0);
    ImGui::SameLine();
    dirty |= ImGui::InputScalar("seed", ImGuiDataType_U64, &in.seed);
    ImGui::PopItemWidth();
    // keep what the window can show
    in.B = std::clamp(in.B, 1, 64);
    in.T = std::clamp(in.T, 1, 32);
    in.C = std::clamp(in.C, 1, 8);
    ImGui::SetNextItemWidth(200);
    dirty |= ImGui::SliderInt("shown batch element b", &in.show_b, 0, in.B - 1);
    in.show_b = std::clamp(in.show_b, 0, in.B - 1);
    ImGui::SameLine();
    ImGui::TextDisabled("(B 1..64, T 1..32, C 1..8)");
    KernelCache* kc = st.kc.get();
    compute(st, dirty, st.average_error, [&ctx, kc, in] { return lab::run_average_demo(ctx, *kc, in); },
            [d = &st.average](const lab::AverageDemo& r) { *d = r; });
    error_text(st.average_error);
    const lab::AverageDemo& d = st.average;
    if (!st.average_error.empty() || d.x.rows == 0) return;
    ImGui::Spacing();
    bool same = d.max_diff < 1e-5f;
    ImGui::TextWrapped("Largest difference between the three versions, over all of (B, T, C):");
    ImGui::TextColored(same ? k_good_colour : k_bad_colour, "  %.3g%s", d.max_diff, same ? "  (the same up to float rounding)" : "");
    heading("the input and the weights");
    titled_matrix("x[b]  (T x C)", "##x", d.x);
    ImGui::SameLine(0, 24);
    ImGui::BeginGroup();
    ImGui::TextUnformatted("wei = softmax(masked_fill(zeros, tril == 0, -inf))");
    heatmap("##wei", d.wei, cell_for(d.wei.cols, std::clamp(ImGui::GetContentRegionAvail().x - 40, 160.0f, 300.0f)), true);
    ImGui::EndGroup();
    heading("xbow[b], three ways");
    titled_matrix("1: loops over the past", "##x1", d.xbow_loop);
    ImGui::SameLine(0, 18);
    titled_matrix("2: tril / rowsum @ x", "##x2", d.xbow_matmul);
    ImGui::SameLine(0, 18);
    titled_matrix("3: masked_fill + softmax, @ x", "##x3", d.xbow_softmax);
}

// --- 3. softmax ---
void draw_softmax(LabState& st, Context& ctx) {
    std::vector<float>& s = st.softmax_scores;
    bool& dirty = st.softmax_dirty;
    ImGui::TextUnformatted("scores:");
    for (size_t i = 0; i < s.size(); i++) {
        ImGui::SameLine();
        ImGui::PushID(int(i));
        ImGui::SetNextItemWidth(56);
        if (ImGui::InputFloat("##s", &s[i], 0, 0, "%.3g")) {
            if (!std::isfinite(s[i])) s[i] = 0;
            dirty = true;
        }
        ImGui::PopID();
    }
    ImGui::SameLine();
    if (ImGui::SmallButton("+") && s.size() < 12) s.push_back(0.0f), dirty = true;
    ImGui::SameLine();
    if (ImGui::SmallButton("-") && s.size() > 1) s.pop_back(), dirty = true;
    ImGui::SameLine();
    if (ImGui::SmallButton("lecture's")) s = lab::SoftmaxDemoInput{}.scores, dirty = true;
    ImGui::SetNextItemWidth(260);
    dirty |= ImGui::SliderFloat("multiplier", &st.softmax_mult, 1.0f, 16.0f, "%.1f");
    st.softmax_mult = std::clamp(std::isfinite(st.softmax_mult) ? st.softmax_mult : 1.0f, 1.0f, 16.0f);
    lab::SoftmaxDemoInput in;
    in.scores = s;
    in.multipliers = {1.0f, st.softmax_mult};
    KernelCache* kc = st.kc.get();
    compute(st, dirty, st.softmax_error, [&ctx, kc, in] { return lab::run_softmax_demo(ctx, *kc, in); },
            [d = &st.softmax](const lab::SoftmaxDemo& r) { *d = r; });
    error_text(st.softmax_error);
    const lab::SoftmaxDemo& d = st.softmax;
    if (!st.softmax_error.empty() || d.probs.size() != 2) return;
    heading("softmax(scores) in blue, softmax(scores * multiplier) in orange");
    std::vector<std::string> labels;
    for (float x : d.scores) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%.3g", x);
        labels.push_back(buf);
    }
    bars("##bars", d.probs[1], &d.probs[0], labels, 150);
    ImGui::TextDisabled("below each pair: its score");
    ImGuiTableFlags fl = ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoHostExtendX;
    if (ImGui::BeginTable("##probs", int(d.scores.size()) + 1, fl)) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::TextUnformatted("score");
        for (size_t i = 0; i < d.scores.size(); i++) ImGui::TableSetColumnIndex(int(i) + 1), ImGui::Text("%.4f", d.scores[i]);
        for (int k = 0; k < 2; k++) {
            ImGui::TableNextRow();
            ImGui::TableSetColumnIndex(0);
            ImGui::Text("softmax(x * %g)", d.multipliers[k]);
            for (size_t i = 0; i < d.scores.size(); i++) ImGui::TableSetColumnIndex(int(i) + 1), ImGui::Text("%.4f", d.probs[k][i]);
        }
        ImGui::EndTable();
    }
    float top = *std::max_element(d.probs[1].begin(), d.probs[1].end());
    ImGui::TextWrapped("With the multiplier at %.1f the largest weight is %.2f%s.", st.softmax_mult, top,
                       top > 0.9f ? ": nearly one-hot, each token would listen to a single other token" : "");
}

// --- 4. scaling ---
void draw_scaling(LabState& st, Context& ctx) {
    lab::ScalingDemoInput& in = st.scaling_in;
    ImGui::SetNextItemWidth(320);
    st.scaling_dirty |= ImGui::SliderInt("head_size", &in.head_size, 1, 256, "%d", ImGuiSliderFlags_Logarithmic);
    in.head_size = std::clamp(in.head_size, 1, 256);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(80);
    st.scaling_dirty |= ImGui::InputScalar("seed", ImGuiDataType_U64, &in.seed);
    auto now = Clock::now();
    if (st.scaling_dirty && now - st.scaling_last >= k_scaling_period) {
        KernelCache* kc = st.kc.get();
        if (compute(st, st.scaling_dirty, st.scaling_error, [&ctx, kc, in] { return lab::run_scaling_demo(ctx, *kc, in); },
                    [d = &st.scaling](const lab::ScalingDemo& r) { *d = r; }))
            st.scaling_last = now;
    }
    error_text(st.scaling_error);
    const lab::ScalingDemo& d = st.scaling;
    if (!st.scaling_error.empty() || d.samples == 0) return;
    ImGui::TextDisabled("q, k = randn(%d, %d, %d); wei = q @ k^T: %zu scores%s", in.B, in.T, d.head_size, d.samples,
                        d.head_size != in.head_size ? "  (updating...)" : "");
    ImGuiTableFlags fl = ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoHostExtendX;
    if (ImGui::BeginTable("##vars", 3, fl)) {
        auto row = [](const char* name, double v, const char* note) {
            ImGui::TableNextRow();
            ImGui::TableSetColumnIndex(0);
            ImGui::TextUnformatted(name);
            ImGui::TableSetColumnIndex(1);
            ImGui::Text("%9.4f", v);
            ImGui::TableSetColumnIndex(2);
            ImGui::TextDisabled("%s", note);
        };
        char about[48];
        std::snprintf(about, sizeof about, "about head_size = %d", d.head_size);
        row("var(q)", d.var_q, "about 1");
        row("var(k)", d.var_k, "about 1");
        row("var(q @ k^T)  unscaled", d.var_unscaled, about);
        row("var(q @ k^T * head_size^-0.5)  scaled", d.var_scaled, "about 1");
        ImGui::EndTable();
    }
    heading("histograms of the scores (same range; values outside go to the end bins)");
    float w = std::clamp((ImGui::GetContentRegionAvail().x - 20) * 0.5f, 160.0f, 420.0f);
    histogram("##hu", "unscaled q @ k^T", d.hist_unscaled, d.hist_lo, d.hist_hi, ImVec2(w, 130), k_bar2_colour);
    ImGui::SameLine(0, 20);
    histogram("##hs", "scaled q @ k^T * head_size^-0.5", d.hist_scaled, d.hist_lo, d.hist_hi, ImVec2(w, 130), k_bar_colour);
    heading("softmax of one row (batch 0, row 0): scaled in blue, unscaled in orange");
    std::vector<std::string> labels;
    for (size_t i = 0; i < d.row_scaled.size(); i++) labels.push_back(std::to_string(i));
    bars("##rows", d.row_unscaled, &d.row_scaled, labels, 110);
    float top = d.row_unscaled.empty() ? 0 : *std::max_element(d.row_unscaled.begin(), d.row_unscaled.end());
    ImGui::TextWrapped("Unscaled, the largest weight of the row is %.2f%s.", top,
                       top > 0.8f ? ": the softmax has collapsed onto one key" : "");
}

// --- 5. encoder ---
void draw_encoder(LabState& st, Context& ctx, const Snapshot& snap, TrainingThread& tt) {
    LabEncoderJob& job = st.encoder_job;
    job.collect();
    heading("the live model (the training dashboard behind this window)");
    if (!snap.has_model) {
        ImGui::TextWrapped("No model yet.");
    } else if (snap.cfg.kind == ModelKind::Bigram) {
        ImGui::TextWrapped("The bigram model has no attention and so no mask. Choose the single-head preset in Controls "
                           "and press Apply & restart, then come back here.");
    } else {
        bool causal = snap.cfg.causal;
        if (ImGui::Checkbox("causal mask (decoder); untick for an encoder", &causal)) {
            tt.set_causal(causal);
            st.live_toggle_step = snap.step;
            st.live_toggle_loss = -1;
        }
        // the mean of the last 50 step losses, and what it was when the mask was last toggled here
        size_t n = snap.step_losses.size(), k = std::min<size_t>(n, 50);
        double recent = 0;
        for (size_t i = n - k; i < n; i++) recent += snap.step_losses[i];
        if (k) recent /= double(k);
        if (st.live_toggle_step >= 0 && st.live_toggle_loss < 0 && k) st.live_toggle_loss = recent;
        ImGui::TextColored(snap.cfg.causal ? k_good_colour : k_bad_colour, "The live model is now %s.",
                           snap.cfg.causal ? "a decoder: each position sees only the past"
                                           : "an encoder: every position sees the whole block, future included");
        if (k) {
            ImGui::Text("training loss, mean of the last %zu steps: %.4f (step %d)", k, recent, snap.step);
            if (st.live_toggle_step >= 0 && st.live_toggle_loss >= 0)
                ImGui::Text("when the mask was switched here (step %d): %.4f", st.live_toggle_step, st.live_toggle_loss);
        }
        ImGui::TextWrapped(
            "Without the mask the grey future fills in, and the weights pile up just right of the diagonal, on the next "
            "character, which is the answer. The loss falls far below the decoder's, and the samples get worse: "
            "generating has no future to copy.%s",
            snap.running ? "" : " Training is paused: press Start (Space) to see it happen.");
        // the live attention map (the Attention panel's, which this window covers) and the latest sample
        int T = snap.att_T;
        if (T > 0 && snap.attention.size() == size_t(T) * T) {
            Matrix att(T, T, snap.attention);
            std::vector<std::string> chars;
            for (const std::string& c : snap.att_chars) chars.push_back(visible_char(c));
            if (chars.size() != size_t(T)) chars.clear();
            ImGui::BeginGroup();
            ImGui::Text("live attention, batch element %d, layer %d, head %d", snap.att_element, snap.att_layer, snap.att_head);
            heatmap("##live", att, cell_for(T, 240.0f), snap.cfg.causal, chars, chars);
            ImGui::EndGroup();
            if (!snap.samples.empty()) {
                ImGui::SameLine(0, 20);
                ImGui::BeginGroup();
                const SampleEntry& e = snap.samples.back();
                ImGui::Text("latest sample (step %d)", e.step);
                ImGui::PushTextWrapPos(0.0f);
                ImGui::TextUnformatted(e.text.substr(0, 300).c_str());
                ImGui::PopTextWrapPos();
                ImGui::EndGroup();
            }
        }
    }

    heading("a clean comparison: the single-head model trained twice, same seed and batches");
    ImGui::PushItemWidth(90);
    ImGui::BeginDisabled(job.busy());
    ImGui::InputInt("steps each", &st.encoder_in.steps, 0);
    ImGui::SameLine();
    ImGui::InputInt("loss over the last", &st.encoder_in.tail, 0);
    ImGui::SameLine();
    ImGui::InputInt("sample chars", &st.encoder_in.sample_chars, 0);
    ImGui::EndDisabled();
    ImGui::PopItemWidth();
    st.encoder_in.steps = std::clamp(st.encoder_in.steps, 1, 20000);
    st.encoder_in.tail = std::clamp(st.encoder_in.tail, 1, st.encoder_in.steps);
    st.encoder_in.sample_chars = std::clamp(st.encoder_in.sample_chars, 0, 2000);
    if (job.busy()) {
        if (ImGui::Button("Stop")) job.stop();
        ImGui::SameLine();
        int total = std::max(job.total(), 1);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s: step %d of %d", job.done() <= total / 2 ? "decoder" : "encoder",
                      job.done() <= total / 2 ? job.done() : job.done() - total / 2, total / 2);
        ImGui::ProgressBar(float(job.done()) / float(total), ImVec2(-1, 0), buf);
    } else {
        ImGui::BeginDisabled(snap.corpus_path.empty());
        if (ImGui::Button("Train both")) job.start(ctx, snap.corpus_path, st.encoder_in);
        ImGui::EndDisabled();
        ImGui::SameLine();
        ImGui::TextDisabled("on the dashboard's corpus, beside the live training");
    }
    error_text(job.error);
    if (!job.has_result) return;
    const lab::EncoderDemo& d = job.result;
    ImGui::Text("After %d steps the encoder's train loss is %.4f below the decoder's.", d.steps,
                d.decoder.train_loss - d.encoder.train_loss);
    float col_w = std::max(200.0f, (ImGui::GetContentRegionAvail().x - 20) * 0.5f);
    if (ImGui::BeginTable("##enc", 2, ImGuiTableFlags_SizingStretchSame)) {
        for (const lab::EncoderRun* r : {&d.decoder, &d.encoder}) {
            ImGui::TableNextColumn();
            ImGui::TextColored(r->causal ? k_good_colour : k_bad_colour, "%s (mask %s)", r->causal ? "decoder" : "encoder",
                               r->causal ? "on" : "off");
            ImGui::Text("train loss (last %d steps): %.4f", d.tail, r->train_loss);
            ImGui::PushID(r->causal ? 1 : 0);
            heatmap("##att", r->att, cell_for(r->att.cols, std::min(col_w - 10, 260.0f)), r->causal);
            ImGui::PopID();
            ImGui::TextWrapped("sample: %s", visible(r->sample).c_str());
        }
        ImGui::EndTable();
    }
}

// --- 6. position ---
void draw_position(LabState& st, Context& ctx) {
    lab::PositionDemoInput& in = st.position_in;
    bool& dirty = st.position_dirty;
    ImGui::SetNextItemWidth(260);
    dirty |= ImGui::InputText("text (2..64 ASCII characters)", &in.text);
    ImGui::PushItemWidth(80);
    dirty |= ImGui::InputScalar("shuffle seed", ImGuiDataType_U64, &in.perm_seed);
    ImGui::SameLine();
    dirty |= ImGui::InputScalar("model seed", ImGuiDataType_U64, &in.seed);
    ImGui::PopItemWidth();
    ImGui::TextUnformatted("position embeddings:");
    ImGui::SameLine();
    if (ImGui::RadioButton("off", !st.position_show_on)) st.position_show_on = false;
    ImGui::SameLine();
    if (ImGui::RadioButton("on", st.position_show_on)) st.position_show_on = true;
    ImGui::SameLine();
    ImGui::TextDisabled("(no mask either way)");
    KernelCache* kc = st.kc.get();
    compute(
        st, dirty, st.position_error,
        [&ctx, kc, in] {
            lab::PositionDemoInput a = in, b = in;
            a.use_pos = false;
            b.use_pos = true;
            return std::make_pair(lab::run_position_demo(ctx, *kc, a), lab::run_position_demo(ctx, *kc, b));
        },
        [off = &st.position_off, on = &st.position_on](const std::pair<lab::PositionDemo, lab::PositionDemo>& r) {
            *off = r.first;
            *on = r.second;
        });
    error_text(st.position_error);
    if (!st.position_error.empty() || st.position_off.text.empty()) return;
    const lab::PositionDemo& d = st.position_show_on ? st.position_on : st.position_off;
    ImGui::Text("input    \"%s\"", d.text.c_str());
    ImGui::Text("permuted \"%s\"   perm =", d.permuted.c_str());
    for (int p : d.perm) ImGui::SameLine(), ImGui::Text("%d", p);
    ImGui::Spacing();
    ImGui::TextUnformatted("Largest difference after undoing the permutation (weights and outputs):");
    for (const lab::PositionDemo* p : {&st.position_off, &st.position_on}) {
        bool same = p->max_diff < 1e-4f;
        ImGui::BulletText("position embeddings %s:", p->use_pos ? "on " : "off");
        ImGui::SameLine();
        ImGui::TextColored(same ? k_good_colour : k_bad_colour, "%.3g  %s", p->max_diff,
                           same ? "(the outputs are the same, only shuffled)" : "(genuinely different results)");
    }
    heading(st.position_show_on ? "attention weights, position embeddings on" : "attention weights, position embeddings off");
    float w = std::max(120.0f, (ImGui::GetContentRegionAvail().x - 40) * 0.5f);
    float cell = cell_for(int(d.text.size()), std::min(w - 20, 300.0f));
    ImGui::BeginGroup();
    ImGui::TextUnformatted("input");
    heatmap("##p0", d.att, cell, false, labels_of(d.text), labels_of(d.text));
    ImGui::EndGroup();
    ImGui::SameLine(0, 30);
    ImGui::BeginGroup();
    ImGui::TextUnformatted("permuted input");
    heatmap("##p1", d.att_perm, cell, false, labels_of(d.permuted), labels_of(d.permuted));
    ImGui::EndGroup();
    ImGui::TextDisabled("Each row of the permuted map is a row of the input's map, its columns shuffled the same way%s.",
                        d.use_pos ? " only without position embeddings" : "");
}

// --- 7. batches ---
void draw_batches(LabState& st, Context& ctx) {
    lab::BatchesDemoInput& in = st.batches_in;
    bool& dirty = st.batches_dirty;
    ImGui::TextDisabled("a batch of %zu sequences through one attention head (causal, position embeddings on)", in.texts.size());
    for (size_t b = 0; b < in.texts.size(); b++) {
        ImGui::PushID(int(b));
        ImGui::SetNextItemWidth(160);
        char label[32];
        std::snprintf(label, sizeof label, "element %zu", b);
        dirty |= ImGui::InputText(label, &in.texts[b]);
        ImGui::PopID();
    }
    ImGui::SetNextItemWidth(160);
    dirty |= ImGui::SliderInt("element to change", &in.changed, 0, int(in.texts.size()) - 1);
    in.changed = std::clamp(in.changed, 0, int(in.texts.size()) - 1);
    ImGui::SetNextItemWidth(160);
    dirty |= ImGui::InputText("its new tokens", &in.replacement);
    KernelCache* kc = st.kc.get();
    compute(st, dirty, st.batches_error, [&ctx, kc, in] { return lab::run_batches_demo(ctx, *kc, in); },
            [d = &st.batches](const lab::BatchesDemo& r) { *d = r; });
    error_text(st.batches_error);
    const lab::BatchesDemo& d = st.batches;
    if (!st.batches_error.empty() || d.before.empty()) return;
    heading("which elements' results changed (compared bit for bit)");
    ImGuiTableFlags fl = ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoHostExtendX;
    if (ImGui::BeginTable("##which", 5, fl)) {
        for (const char* h : {"b", "before", "after", "attention weights", "outputs"}) ImGui::TableSetupColumn(h);
        ImGui::TableHeadersRow();
        for (size_t b = 0; b < d.before.size() && b < d.att_changed.size() && b < d.out_changed.size(); b++) {
            ImGui::TableNextRow();
            ImGui::TableSetColumnIndex(0);
            ImGui::Text("%zu", b);
            ImGui::TableSetColumnIndex(1);
            ImGui::Text("\"%s\"", d.before[b].c_str());
            ImGui::TableSetColumnIndex(2);
            ImGui::Text("\"%s\"", d.after[b].c_str());
            ImGui::TableSetColumnIndex(3);
            ImGui::TextColored(d.att_changed[b] ? k_bad_colour : k_good_colour, "%s",
                               d.att_changed[b] ? "changed" : "bit-identical");
            ImGui::TableSetColumnIndex(4);
            ImGui::TextColored(d.out_changed[b] ? k_bad_colour : k_good_colour, "%s",
                               d.out_changed[b] ? "changed" : "bit-identical");
        }
        ImGui::EndTable();
    }
    heading("attention weights of the changed element");
    float cell = cell_for(d.att_before.cols, std::min((ImGui::GetContentRegionAvail().x - 40) * 0.5f, 300.0f));
    ImGui::BeginGroup();
    ImGui::TextUnformatted("before");
    heatmap("##b0", d.att_before, cell, true, labels_of(d.before[d.changed]), labels_of(d.before[d.changed]));
    ImGui::EndGroup();
    ImGui::SameLine(0, 30);
    ImGui::BeginGroup();
    ImGui::TextUnformatted("after");
    heatmap("##b1", d.att_after, cell, true, labels_of(d.after[d.changed]), labels_of(d.after[d.changed]));
    ImGui::EndGroup();
}

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
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("The self-attention lab: seven small demos (key L)");
    }
    ImGui::End();
    ImGui::PopStyleVar(2);
}

}  // namespace

// --- the encoder job ---

LabEncoderJob::~LabEncoderJob() {
    stop();
    join();
}

void LabEncoderJob::join() {
    if (m_thread.joinable()) m_thread.join();
}

void LabEncoderJob::stop() { m_stop = true; }

void LabEncoderJob::start(Context& ctx, const std::string& corpus_path, const lab::EncoderDemoInput& in) {
    if (busy()) return;
    join();
    m_stop = false;
    m_finished = false;
    m_done = 0;
    m_total = 2 * in.steps;
    error.clear();
    try {
        m_thread = std::thread([this, &ctx, corpus_path, in] {
            std::string err;
            lab::EncoderDemo d;
            try {
                Dataset data = Dataset::from_file(corpus_path);
                d = lab::run_encoder_demo(ctx, data, in, [this](int done, int total) {
                    m_done = done;
                    m_total = total;
                    return !m_stop.load();
                });
            } catch (const lab::Stopped&) {
                err = "stopped";
            } catch (const std::exception& e) {
                err = e.what();
            }
            {
                std::lock_guard lk(m_mutex);
                m_ok = err.empty();
                m_error = err;
                if (m_ok) m_result = std::move(d);
            }
            m_finished = true;
        });
    } catch (const std::exception& e) {
        error = std::string("cannot start the training thread: ") + e.what();
    }
}

bool LabEncoderJob::collect() {
    if (!m_thread.joinable() || !m_finished.load()) return false;
    join();
    std::lock_guard lk(m_mutex);
    error = m_error;
    if (m_ok) {
        result = std::move(m_result);
        has_result = true;
    }
    return true;
}

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
    error_text(st.start_error);
    const lab::DemoInfo& info = list[size_t(st.demo)];
    ImGui::Text("%d. %s", st.demo + 1, info.title.c_str());
    ImGui::TextWrapped("%s", info.explanation.c_str());
    ImGui::Separator();
    if (!st.kc) {
        try {
            st.kc = std::make_unique<KernelCache>(ctx);
        } catch (const std::exception& e) {
            error_text(std::string("cannot prepare the compute kernels: ") + e.what());
        }
    }
    if (st.kc) {
        const std::string& name = info.name;
        if (name == "matmul") draw_matmul(st, ctx);
        else if (name == "average") draw_average(st, ctx);
        else if (name == "softmax") draw_softmax(st, ctx);
        else if (name == "scaling") draw_scaling(st, ctx);
        else if (name == "encoder") draw_encoder(st, ctx, snap, tt);
        else if (name == "position") draw_position(st, ctx);
        else if (name == "batches") draw_batches(st, ctx);
    }
    ImGui::EndChild();
    ImGui::End();
}

void append_lab_layout(const LabState& st, const std::string& layout_path) {
    std::ofstream f(layout_path, std::ios::app);
    const ImVec4& r = st.content_rect;
    f << "lab " << std::lround(r.x) << ' ' << std::lround(r.y) << ' ' << std::lround(r.z) << ' ' << std::lround(r.w) << '\n';
}

}  // namespace attn
