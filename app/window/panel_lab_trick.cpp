// Lab demos 1-4, the mathematical trick and the scaling of attention: matmul, average, softmax, scaling.
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "panel_lab_internal.h"

namespace attn::lab_ui {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto k_scaling_period = std::chrono::milliseconds(150);  // at most ~7 recomputes a second while dragging

}  // namespace

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
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s", d.x_origin.c_str());  // PyTorch's own numbers, or why not
    ImGui::PopStyleColor();
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
    heading("version 4: self-attention (the lecture's next cell, its numbers)");
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("torch.manual_seed(1337); x = torch.randn(%d, %d, %d); key, query, value = nn.Linear(%d, %d, "
                       "bias=False); wei = softmax(masked_fill(query(x) @ key(x)^T, tril == 0, -inf)). Each token now "
                       "weighs the past by its own, data-dependent affinities (not yet scaled by head_size**-0.5: that "
                       "comes next, in Scaling).", lab::k_head_B, lab::k_head_T, lab::k_head_C, lab::k_head_C, lab::k_head_HS);
    ImGui::PopStyleColor();
    titled_matrix("wei[0]  (T x T)", "##headwei", d.head_wei);
    ImGui::SameLine(0, 24);
    heatmap("##headwei_map", d.head_wei, cell_for(d.head_wei.cols, 200.0f), true);
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
    ImGui::TextDisabled("torch.manual_seed(%llu); q = torch.randn(%d, %d, %d); k = torch.randn(same); wei = q @ k^T: %zu "
                        "scores%s", (unsigned long long)in.seed, in.B, in.T, d.head_size, d.samples,
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
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("The lecture's own cell (its generator going on from the head in Average's version 4): k = "
                       "torch.randn(%d, %d, %d); q = torch.randn(same); wei = q @ k^T * head_size**-0.5 gives k.var() "
                       "%.4f, q.var() %.4f, wei.var() %.4f (unscaled %.4f).", lab::k_head_B, lab::k_head_T,
                       lab::k_head_HS, d.lecture.var_k, d.lecture.var_q, d.lecture.var_scaled, d.lecture.var_unscaled);
    ImGui::PopStyleColor();
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

}  // namespace attn::lab_ui
