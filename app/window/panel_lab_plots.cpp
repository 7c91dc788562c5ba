// Lab window drawing helpers: error text, headings, number tables, heatmaps, bars and histograms for the demos.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "panel_attention_internal.h"  // the Attention panel's colours
#include "panel_lab_internal.h"
#include "panels.h"

namespace attn::lab_ui {

namespace {

const ImVec4 k_error_colour{1.0f, 0.45f, 0.4f, 1.0f};
const ImU32 k_axis_colour = IM_COL32(140, 140, 150, 255);

}  // namespace

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
void matrix_table(const char* id, const Matrix& m, const char* fmt) {
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
void titled_matrix(const char* title, const char* id, const Matrix& m, const char* fmt) {
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

// A (T,T) weight matrix as a heatmap: colour = weight / the largest weight (a colour bar from 0 to it on the right),
// masked future in grey when `causal`, values printed in big cells, characters along both axes when given, the
// value under the mouse as a tooltip.
void heatmap(const char* id, const Matrix& m, float cell, bool causal, const std::vector<std::string>& row_chars,
             const std::vector<std::string>& col_chars) {
    if (m.rows <= 0 || m.cols <= 0) return;
    float vmax = 0;
    for (float v : m.v) vmax = std::max(vmax, std::isfinite(v) ? v : 0.0f);
    if (vmax <= 0) vmax = 1;
    const bool labels = !row_chars.empty() || !col_chars.empty();
    const float lw = labels ? 18.0f : 0.0f, lh = labels ? ImGui::GetTextLineHeight() + 2 : 0.0f;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImVec2 g(p0.x + lw, p0.y + lh);
    const float bar_w = 56;  // the colour bar on the right: colours are scaled to this map's largest weight
    ImGui::InvisibleButton(id, ImVec2(lw + cell * m.cols + bar_w, lh + cell * m.rows));
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
    {  // 0 .. vmax, as the colours were scaled
        float bx = g.x + cell * m.cols + 8, bh = std::max(cell * m.rows, 40.0f);
        for (int k = 0; k < 24; k++) {
            float y0 = g.y + bh * (1 - (k + 1) / 24.0f), y1 = g.y + bh * (1 - k / 24.0f);
            dl->AddRectFilled(ImVec2(bx, y0), ImVec2(bx + 10, y1 + 0.5f), colormap((k + 0.5f) / 24));
        }
        char top[16];
        std::snprintf(top, sizeof top, "%.2f", vmax);
        ImU32 c = ImGui::GetColorU32(ImGuiCol_TextDisabled);
        dl->AddText(ImVec2(bx + 13, g.y - 2), c, top);
        dl->AddText(ImVec2(bx + 13, g.y + bh - ImGui::GetTextLineHeight() + 2), c, "0");
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

}  // namespace attn::lab_ui
