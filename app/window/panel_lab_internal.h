// Lab window internals: the colours, drawing helpers and per-demo draw functions the panel_lab*.cpp files share.
#pragma once
#include <algorithm>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include <imgui.h>

#include "panel_lab.h"

namespace attn::lab_ui {

using lab::Matrix;

inline const ImVec4 k_good_colour{0.45f, 0.9f, 0.45f, 1.0f};
inline const ImVec4 k_bad_colour{1.0f, 0.6f, 0.3f, 1.0f};
inline const ImU32 k_bar_colour = IM_COL32(86, 156, 230, 255);
inline const ImU32 k_bar2_colour = IM_COL32(240, 170, 60, 255);

// An error in the error colour, wrapped; nothing when `e` is empty.
void error_text(const std::string& e);
// A dim section title over a separator.
void heading(const char* s);

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

// `s` with its newlines written as \n.
std::string visible(const std::string& s);
// The characters of `s` as heatmap labels.
std::vector<std::string> labels_of(const std::string& s);
// A matrix as a bordered table of numbers, sized to its columns.
void matrix_table(const char* id, const Matrix& m, const char* fmt = "%.4f");
// "title" above a table, as one group (so groups can sit side by side).
void titled_matrix(const char* title, const char* id, const Matrix& m, const char* fmt = "%.4f");
// Big operator glyph between side-by-side matrices.
void op_between(const char* op);

// A (T,T) weight matrix as a heatmap: colour = weight / the largest weight (a colour bar from 0 to it on the right),
// masked future in grey when `causal`, values printed in big cells, characters along both axes when given, the
// value under the mouse as a tooltip.
void heatmap(const char* id, const Matrix& m, float cell, bool causal, const std::vector<std::string>& row_chars = {},
             const std::vector<std::string>& col_chars = {});
// A cell size that fits `n` cells into `width` pixels, between 10 and 44.
float cell_for(int n, float width);
// Vertical bars of values in [0, 1], one group per index: `a` and optionally `b` side by side, labels below.
void bars(const char* id, const std::vector<float>& a, const std::vector<float>* b, const std::vector<std::string>& labels,
          float height);
// A histogram of counts over [lo, hi) with the axis ends labelled.
void histogram(const char* id, const char* title, const std::vector<int>& h, float lo, float hi, ImVec2 size, ImU32 colour);

// The demos, one draw function each: controls, then the latest result (panel_lab_trick.cpp: 1-4, panel_lab_model.cpp: 5-8).
void draw_matmul(LabState& st, Context& ctx);
void draw_average(LabState& st, Context& ctx);
void draw_softmax(LabState& st, Context& ctx);
void draw_scaling(LabState& st, Context& ctx);
void draw_encoder(LabState& st, Context& ctx, const Snapshot& snap, TrainingThread& tt);
void draw_position(LabState& st, Context& ctx);
void draw_batches(LabState& st, Context& ctx);
void draw_graph(LabState& st, Context& ctx);

}  // namespace attn::lab_ui
