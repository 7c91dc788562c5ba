// Lab demos 5-8 on models: encoder versus decoder (and its training job), position, batches, graph (message passing).
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "panel_lab_internal.h"
#include "panels.h"

namespace attn {

namespace lab_ui {

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
        ImGui::TextColored(snap.cfg.causal ? k_good_colour : k_bad_colour, "The live model is %s.",
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
            ImGui::Text("live attention, batch element %d, layer %d, head %d", snap.att_element, snap.att_layer + 1,
                        snap.att_head + 1);
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
    ImGui::TextWrapped("After %d steps %s.", d.steps, lab::encoder_verdict(d).c_str());
    float col_w = std::max(200.0f, (ImGui::GetContentRegionAvail().x - 20) * 0.5f);
    if (ImGui::BeginTable("##enc", 2, ImGuiTableFlags_SizingStretchSame)) {
        for (const lab::EncoderRun* r : {&d.decoder, &d.encoder}) {
            ImGui::TableNextColumn();
            ImGui::TextColored(r->causal ? k_good_colour : k_bad_colour, "%s (mask %s)", r->causal ? "decoder" : "encoder",
                               r->causal ? "on" : "off");
            ImGui::Text("train loss (last %d steps): %.4f", d.tail, r->train_loss);
            ImGui::PushID(r->causal ? 1 : 0);
            heatmap("##att", r->att, cell_for(r->att.cols, std::min(col_w - 70, 260.0f)), r->causal);
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
    float cell = cell_for(int(d.text.size()), std::min(w - 100, 300.0f));
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
    if (d.unchanged())
        ImGui::TextColored(k_bad_colour, "Its new tokens are the same text as before: nothing changed. Type other characters.");
    heading("attention weights of the changed element");
    float cell = cell_for(d.att_before.cols, std::min((ImGui::GetContentRegionAvail().x - 40) * 0.5f - 90, 300.0f));
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

// The nodes in a row, an arc for every edge j -> t (the mask's), drawn strong into the chosen node: its width and
// label the weight; then the same weights as the (T, T) heatmap, row t being node t's incoming edges.
void draw_graph(LabState& st, Context& ctx) {
    lab::GraphDemoInput& in = st.graph_in;
    bool& dirty = st.graph_dirty;
    ImGui::SetNextItemWidth(260);
    dirty |= ImGui::InputText("text: the nodes (2..64 ASCII characters)", &in.text);
    dirty |= ImGui::Checkbox("mask (a decoder: no edges from the future)", &in.causal);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(80);
    dirty |= ImGui::InputScalar("model seed", ImGuiDataType_U64, &in.seed);
    KernelCache* kc = st.kc.get();
    compute(
        st, dirty, st.graph_error, [&ctx, kc, in] { return lab::run_graph_demo(ctx, *kc, in); },
        [g = &st.graph](const lab::GraphDemo& r) { *g = r; });
    error_text(st.graph_error);
    const lab::GraphDemo& d = st.graph;
    const int T = int(d.text.size());
    if (!st.graph_error.empty() || T < 2 || d.att.rows != T) return;
    int& sel = st.graph_node;
    if (sel < 0 || sel >= T) sel = T - 1;
    ImGui::Text("%d nodes, %d edges of the %d possible: %s", T, d.edges, T * T,
                d.causal ? "node t hears from itself and every node before it" : "every node hears from every node");
    ImGui::TextDisabled("Hover a node to see what it receives; arcs run from the sender to the receiver.");

    ImDrawList* dl = ImGui::GetWindowDrawList();
    float avail = std::max(200.0f, ImGui::GetContentRegionAvail().x - 10);
    float step = std::min(60.0f, avail / float(T)), r = std::clamp(step * 0.32f, 4.0f, 13.0f);
    float arc_h = std::min(170.0f, step * float(T) * 0.45f), h = arc_h + 2 * r + 24;
    ImVec2 p0 = ImGui::GetCursorScreenPos();
    float base = p0.y + arc_h + r + 8;
    auto x_of = [&](int t) { return p0.x + (float(t) + 0.5f) * step; };
    ImGui::InvisibleButton("##graph", ImVec2(step * float(T), h));
    if (ImGui::IsItemHovered()) {  // the node under the mouse's column
        int t = int((ImGui::GetIO().MousePos.x - p0.x) / step);
        if (t >= 0 && t < T) sel = t;
    }
    const ImU32 faint = IM_COL32(150, 150, 150, 60);
    const bool weight_labels = step >= 34;                  // room for "0.25" between nodes; else the heatmap has them
    const int index_every = int(std::ceil(22.0f / step));  // node numbers that do not run together
    for (int pass = 0; pass < 2; pass++)  // the other nodes' edges faint, then the chosen node's on top
        for (int t = 0; t < T; t++) {
            if ((t == sel) != (pass == 1)) continue;
            for (int j = 0; j < T; j++) {
                if (d.causal && j > t) continue;
                float w = d.att.at(t, j);
                ImU32 col = t == sel ? k_bar_colour : faint;
                float thick = t == sel ? 1.0f + 9.0f * w : 1.0f;
                ImVec2 a(x_of(j), base - r), b(x_of(t), base - r);
                float top;
                if (j == t) {  // an edge from itself: a loop above the node
                    top = base - r - 2.2f * r;
                    dl->AddCircle(ImVec2(a.x, base - 2.1f * r), 1.1f * r, col, 16, thick);
                } else {
                    float lift = arc_h * float(std::abs(t - j)) / float(T);
                    top = base - r - 0.75f * lift;
                    dl->AddBezierCubic(a, ImVec2(a.x, a.y - lift), ImVec2(b.x, b.y - lift), b, col, thick, 24);
                    if (t == sel) dl->AddTriangleFilled(ImVec2(b.x, b.y), ImVec2(b.x - 4, b.y - 8), ImVec2(b.x + 4, b.y - 8), col);
                }
                if (t == sel && weight_labels) {
                    char s[16];
                    std::snprintf(s, sizeof s, "%.2f", w);
                    ImVec2 ts = ImGui::CalcTextSize(s);
                    float mx = j == t ? a.x : 0.5f * (a.x + b.x);
                    dl->AddText(ImVec2(mx - ts.x * 0.5f, top - ts.y), ImGui::GetColorU32(ImGuiCol_Text), s);
                }
            }
        }
    const std::vector<std::string> chars = labels_of(d.text);  // a space drawn visible, as on the heatmap's axes
    for (int t = 0; t < T; t++) {
        ImVec2 c(x_of(t), base);
        dl->AddCircleFilled(c, r, t == sel ? IM_COL32(240, 170, 60, 255) : IM_COL32(70, 90, 120, 255));
        const std::string& ch = chars[size_t(t)];
        ImVec2 ts = ImGui::CalcTextSize(ch.c_str());
        dl->AddText(ImVec2(c.x - ts.x * 0.5f, c.y - ts.y * 0.5f), IM_COL32(255, 255, 255, 255), ch.c_str());
        if (t % index_every != 0 && t != sel) continue;
        char n[16];
        std::snprintf(n, sizeof n, "%d", t);
        ts = ImGui::CalcTextSize(n);
        dl->AddText(ImVec2(c.x - ts.x * 0.5f, c.y + r + 2),
                    ImGui::GetColorU32(t == sel ? ImGuiCol_Text : ImGuiCol_TextDisabled), n);
    }
    ImGui::TextWrapped("Node %d '%s' receives the weighted sum of the values of its %d incoming edges (weights sum to "
                       "1%s).", sel, visible(std::string(1, d.text[size_t(sel)])).c_str(), d.causal ? sel + 1 : T,
                       weight_labels ? "" : "; too many nodes to label the arcs: its row of the heatmap below has them");
    bool ok = d.max_message_error < 1e-4f && d.max_sum_error < 1e-4f && d.max_no_edge == 0.0f;
    ImGui::PushStyleColor(ImGuiCol_Text, ok ? k_good_colour : k_bad_colour);
    ImGui::TextWrapped("Checked on the CPU: largest |output - sum of w v over the edges| %.2g; largest |sum of weights - 1| "
                       "%.2g%s", d.max_message_error, d.max_sum_error,
                       !d.causal ? "" : d.max_no_edge == 0.0f ? "; weight from the future exactly 0" : "; weight from the future NOT 0");
    ImGui::PopStyleColor();
    heading("the same weights as the (T, T) heatmap: row t is node t's incoming edges");
    // in view without scrolling where the Lab's height allows: the cells fit the room left below
    ImVec2 room = ImGui::GetContentRegionAvail();
    float fit_h = (room.y - ImGui::GetTextLineHeight() - 8) / float(T);
    float cell = cell_for(T, std::min({room.x - 100, 320.0f, fit_h * float(T)}));
    heatmap("##g", d.att, cell, d.causal, labels_of(d.text), labels_of(d.text));
}

}  // namespace lab_ui

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

}  // namespace attn
