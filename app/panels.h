// The window's panels: each is a state struct plus one draw function, reading a Snapshot and posting commands.
#pragma once
#include <string>
#include <vector>

#include <imgui.h>

#include "training_thread.h"

namespace attn {

// Where things were drawn this frame, in framebuffer pixels (written next to screenshots for tests).
struct PanelLayout {
    ImVec4 heatmap{};  // x, y, w, h of the T x T cells
    int heatmap_T = 0;
    ImVec4 loss_plot{};
    ImVec4 samples_text{};
    ImU32 masked_colour = 0, train_colour = 0, val_colour = 0;
};

struct ControlsState {
    Config edit;              // what the fields show
    std::string corpus_path;  // field for Apply & restart
    int fps_cap = 30;
    bool initialised = false;
};
// Returns true when the user pressed the screenshot button.
bool draw_controls(ControlsState& st, const Snapshot& snap, TrainingThread& tt);

struct LossState {
    bool log_y = false;
    std::string csv_path = "attnlab_loss.csv";
    std::string csv_message;
};
void draw_loss(LossState& st, const Snapshot& snap, PanelLayout& layout);
// Writes step,train_loss,eval_train,eval_val; returns an error message or "".
std::string write_loss_csv(const Snapshot& snap, const std::string& path);

struct AttentionState {
    int element = 0, layer = 0, head = 0;
    int first = 0;  // first position shown when T is too large for the panel
    bool show_values = true;
};
void draw_attention(AttentionState& st, const Snapshot& snap, TrainingThread& tt, PanelLayout& layout);

struct SamplesState {
    std::string prompt;
};
void draw_samples(SamplesState& st, const Snapshot& snap, TrainingThread& tt, PanelLayout& layout);

struct StatusState {
    double fps = 0;
    std::string device_name;
    std::string notice;  // e.g. where the last screenshot went
};
void draw_status(StatusState& st, const Snapshot& snap, int fps_cap);

// Shows c as it reads in the attention labels: newline as \n, space as a middle dot.
std::string visible_char(const std::string& c);

}  // namespace attn
