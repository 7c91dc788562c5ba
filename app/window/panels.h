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
    std::string heatmap_labels;  // the shown positions' labels as drawn in full (visible_char), one space between
    ImVec4 loss_plot{};
    ImVec4 samples_text{};
    ImVec4 status_bar{};
    ImVec4 corpus_field{}, restart_button{};  // Controls' corpus path and Apply & restart (w 0: scrolled out of view)
    ImVec4 batch_field{};                     // Controls' live batch size, its +/- buttons and label included
    ImVec4 lr_field{};                        // Controls' learning rate, its label included
    ImVec4 prompt_field{};                    // Samples' prompt
    ImVec4 preset_combo{};                    // Controls' preset combo
    ImVec4 probe_button{}, batch_button{};    // Attention's source: the probe, the training batch
    ImVec4 timeline{}, timeline_first{};      // the probe's recorded steps (slider), its "first" button
    int probe_step = -1;                      // the snapshot shown (-1: the training batch)
    ImVec4 probe_field{};                     // the probe text
    ImVec4 probe_note{};                      // the line under it on characters left out or cut (w 0: none)
    ImVec4 play_button{};                     // the time-lapse's Play / Pause
    ImVec4 legend{};                          // the heatmap's legend (colour bar, swatch, key)
    ImVec4 heads_header{};                    // the Heads view's header (opens and closes it)
    ImVec4 heads_grid{};                      // the Heads view's layer x head grid (w 0: closed)
    uint64_t heads_hash = 0;                  // FNV-1a of its cells' numbers as shown (tests tell two steps apart)
    ImVec4 heads_by_combo{};                  // its "colour by" choice
    ImVec4 heads_importance_item{};           // ... the "importance" item while that list is open (w 0: closed)
    int heads_by = -1;                        // the score it is coloured by (index into k_head_scores)
    int importance_step = -1;                 // the step whose importance the grid shows (-1: none)
    double importance_first = 0;              // ... L1 H1's there
    ImVec4 knock_checkbox{};                  // the Heads view's "knock out" switch
    double knock_val_ablated = -1;            // the validation loss with the knocked-out heads (-1: none shown)
    bool legend_clipped = false;              // ... cut off by the panel's edge this frame
    ImVec4 steps_cap_field{};                 // Controls' slow motion (steps/s cap)
    ImVec4 start_button{};                    // Controls' Start / Pause (/ "+N steps")
    int controls_widgets = 0;                 // Controls' widgets drawn this frame (folded sections' not counted)
    std::vector<std::string> controls_hidden; // ... of those, the ones not wholly in view
    float controls_scroll_max = 0;            // how far Controls' sections can scroll (0: they fit)
    float loss_cursor_x = -1;                 // the loss plot's cursor at the scrubbed step (-1: none)
    ImVec4 icl_checkbox{};                    // the loss plot's "in-context" switch
    int icl_points = 0;                       // ... the ICL score's points drawn, and the last one's value
    int induction_rise = -1;                  // the step the loss plot marks as the induction head's (-1: none)
    double icl_last = 0;
    int samples_step = -1;                    // the step of the sample shown in Samples (-1: none)
    uint64_t samples_hash = 0;                // FNV-1a of its text (tests tell two samples apart by it)
    int samples_tokens = 0;                   // the BPE tokens it is drawn as (0: characters)
    float loss_y_lo = 0, loss_y_hi = 0;       // the loss plot's y axis
    std::vector<std::pair<std::string, ImVec4>> preset_items;  // its list's entries, while it is open
    std::vector<std::string> ghost_names;     // the loss plot's earlier runs, oldest first
    ImU32 masked_colour = 0, train_colour = 0, val_colour = 0, plot_bg_colour = 0;
};
// The last item's rectangle (x, y, w, h) for PanelLayout; all 0 when it is scrolled out of view (panel_controls.cpp).
ImVec4 visible_rect();

struct ControlsState {
    Config edit;              // what the fields show
    std::string corpus_path;  // field for Apply & restart
    int fps_cap = 30;
    float max_steps_per_s = 0;  // slow motion (TrainingThread::set_max_steps_per_s); 0: full speed
    bool save_cpu = true;  // unwatched (no input) while training: drawing takes at most a small share of the time
    bool initialised = false;
    uint64_t model_id = 0;  // snap.model_id the fields were last taken from (a loaded checkpoint brings its config)
    // checkpoints
    std::string ckpt_path = "attnlab_run.safetensors";
    double autosave_min = 5;  // minutes, fractions allowed (--autosave); 0: off
    // The causal mask and dropout follow the running config (the Lab can change the mask) unless the user is
    // editing them or a change sent from here has not reached the running config yet.
    bool dropout_active = false;
    bool live_waiting = false;  // set_live sent; waiting for snap.cfg to show it
    double live_sent_at = 0;    // ImGui::GetTime() of that set_live
    Config live_sent;
    int confirm_reset_step = -1;  // >= 0: the "Reset?" prompt is open, for a run at that step
    // A live field typed into is applied when it is left (Enter, Tab, a click elsewhere), not at every keystroke:
    // "3e-4" typed into the learning rate trained at lr 3 on the way.
    bool live_dirty = false;
    // A preset picked in the Model section: its training settings (lr, max iters, dropout, ...) go with Apply &
    // restart; the Live fields keep showing the running model's, which they change.
    bool preset_live_set = false;
    Config preset_live;
    // What the last Apply & restart tried: its "Not applied" error shows only while the fields still say that.
    Config restart_sent_cfg;
    std::string restart_sent_corpus;
};
// Returns true when the user pressed the screenshot button.
// Ctrl+S / Ctrl+O in the window call these too.
void controls_save(ControlsState& st, TrainingThread& tt);
void controls_load(ControlsState& st, TrainingThread& tt);
// Start / Pause (Space); paused at max iters, trains more_steps(cfg) further instead of without a limit.
void controls_start_pause(ControlsState& st, const Snapshot& snap, TrainingThread& tt);
// Reset (R): new random weights at once at step 0, else after the "Reset?" prompt (the run's steps would be lost).
void controls_reset(ControlsState& st, const Snapshot& snap, TrainingThread& tt);
void reset_answer(ControlsState& st, TrainingThread& tt, bool reset);
void draw_reset_prompt(ControlsState& st, TrainingThread& tt);
// A small window in the middle of the main one for a question (Reset?, Resume?); end it with ImGui::End().
void begin_prompt(const char* title);
bool draw_controls(ControlsState& st, const Snapshot& snap, TrainingThread& tt, PanelLayout& layout);

// A finished run drawn faintly behind the current one (A/B); the user can hide, rename or remove it.
struct Ghost {
    uint64_t id = 0;
    std::string name;
    std::vector<EvalPoint> evals;
    bool visible = true;
};

struct LossState {
    bool log_y = false;
    bool all_refs = false;       // every preset's lecture value (faint), not just the current one's
    std::vector<Ghost> ghosts;   // oldest first
    uint64_t ghosts_seen = 0;    // the last FinishedRun id taken from the Snapshot
    std::string csv_path = "attnlab_loss.csv";
    std::string csv_message;
    int cursor_step = -1;   // in: the time-lapse's scrubbed step, drawn as a cursor (-1: none)
    double view_lo = 0, view_hi = 0;  // the steps in view (both 0: all); the wheel zooms, a drag moves
    bool dragged = false;             // the press under way moved the view (so it is no click)
    int clicked_step = -1;  // out: the step under a click on the plot this frame (-1: none)
    bool icl = false;          // the in-context learning score over the recorded steps (TrainingThread::set_icl)
    bool icl_toggled = false;  // out: icl changed this frame
};
void draw_loss(LossState& st, const Snapshot& snap, PanelLayout& layout);
// Writes step,train_loss,eval_train,eval_val; returns an error message or "".
std::string write_loss_csv(const Snapshot& snap, const std::string& path);

struct AttentionState {
    int element = 0, layer = 0, head = 0;
    int first = 0;  // first position shown when T is too large for the panel
    bool show_values = true;
    bool all_heads = false;  // a grid of every layer x head instead of one map
    float cell = 0;          // the last frame's cell size in pixels (whether values fit)
    // the source: the training batch, or the time-lapse's probe at a recorded step (live: the latest)
    bool probe = false, live = true;
    int probe_step = -1;
    // Play: the recorded steps one after another, play_speed a second; step_by (the arrow keys) and jump_to (a click
    // on the loss plot: the recorded step nearest it) are taken at the next frame
    bool playing = false;
    float play_speed = 4;
    double play_next = 0;
    int step_by = 0, jump_to = -1;
    char probe_text[1024] = {};  // the field; filled from the run's probe until edited
    bool probe_edited = false;
    std::vector<std::string> recent_probes;  // the last probes shown, newest first (at most k_recent_probes)
    bool heads_open = false;  // the Heads view (probe mode): every head's scores
    int heads_by = 0;         // the score its grid is coloured by: induction, previous, duplicate, first, current,
                              // entropy, importance
    bool knock_mode = false;      // a click on a head knocks it out (or back in) instead of opening its map
    std::vector<HeadId> knocked;  // the heads knocked out
    static constexpr size_t k_recent_probes = 6;
};
void draw_attention(AttentionState& st, const Snapshot& snap, TrainingThread& tt, PanelLayout& layout);

struct SamplesState {
    std::string prompt;
    int at_step = -1;  // in: the time-lapse's scrubbed step: the sample taken last at or before it is shown (-1: live)
};
void draw_samples(SamplesState& st, const Snapshot& snap, TrainingThread& tt, PanelLayout& layout);

// Numbers shown as text (status bar, Performance panel) change at most this often while training: readable instead
// of flickering at the frame rate, and a panel whose pixels did not change is not drawn again
// (Renderer::plan_redraw), which on a CPU driver leaves that time to training (the two changed in 88-99% of frames
// at 30 fps: ~17% of the frame's area). A change of state (run, pause, reset, done) shows at once.
constexpr double k_readout_period_s = 0.25;
struct Readout {
    double at = -1e30;  // ImGui::GetTime() of the last refresh
    uint64_t state = 0;
    // Whether to take new values now: the period has passed, or `state` differs from the last refresh's.
    bool due(uint64_t now_state) {
        double now = ImGui::GetTime();
        if (now_state == state && now >= at && now - at < k_readout_period_s) return false;
        at = now;
        state = now_state;
        return true;
    }
};
// What decides a refresh at once: run state, model, and whether the step went back (a reset or a loaded checkpoint)
inline uint64_t readout_state(const Snapshot& s, int shown_step) {
    return (s.running ? 1u : 0u) | (s.done ? 2u : 0u) | (s.busy.empty() ? 0u : 4u) | (s.fatal ? 8u : 0u) |
           (s.has_model ? 16u : 0u) | (s.step < shown_step ? 32u : 0u) | (s.model_id << 6);
}

struct PerfState {
    bool profiling = true;  // per-kernel GPU timestamps (what the thread was last told)
    bool told = false;      // whether the thread has been told at all
    bool details = false;   // the details (shares, kernels) are unfolded: the panel takes more room
    bool cpu_one_thread = false;  // a CPU driver running every dispatch on one thread (--cpu-threads)
    uint64_t pool_model_id = ~uint64_t(0);  // the model pool_model was decided for (Snapshot::model_id)
    bool pool_model = false;                // that model would run faster on the driver's thread pool
    double build_ms = 0, render_ms = 0;  // the UI thread's cost per frame (smoothed): panels, then draw + present
    void note_frame(double build, double render) {
        build_ms = build_ms > 0 ? 0.95 * build_ms + 0.05 * build : build;
        render_ms = render_ms > 0 ? 0.95 * render_ms + 0.05 * render : render;
    }
    struct Shown { double ms_per_step = 0, gpu_ms = 0, build_ms = 0, render_ms = 0, train_s = 0, eval_s = 0, sample_s = 0, wall_s = 0; };
    Shown shown;  // what the panel's numbers show (refreshed by `readout`)
    Readout readout;
};
void draw_perf(PerfState& st, const Snapshot& snap, TrainingThread& tt);

struct StatusState {
    double fps = 0;
    struct Shown {
        int step = 0;
        double it_per_s = 0, tokens_per_s = 0, ms_per_step = 0, gpu_ms = 0, fps = 0;
        float grad_norm = -1;
    };
    Shown shown;  // what the bar's numbers show (refreshed by `readout`)
    Readout readout;
    std::string device_name;
    std::string notice;  // e.g. where the last screenshot went
    bool saving = false;  // the frame rate is below the cap to leave the CPU to training
};
void draw_status(StatusState& st, const Snapshot& snap, int fps_cap);

// Shows c as it reads in the attention labels: newline as \n, space as a middle dot; a token of several characters
// the same way character by character, bytes that are no whole UTF-8 character as \xNN.
std::string visible_char(const std::string& c);
// `text` cut to fit `width` pixels, "..." marking the cut (a status line, a token's label in a narrow column).
std::string fit_text(const std::string& text, float width);
// visible_char in quotes, with the name of an invisible one: "'·' (space)", "'\n' (newline)", "'a'".
std::string named_char(const std::string& c);
// ImGui::SameLine() if an item `w` pixels wide still fits the window after the last item; else the item goes below
// (a narrow window would cut a row of controls off at the panel's edge).
void same_line_if_fits(float w);
// The width of a slider or checkbox `frame_w` wide with `label` beside it, for same_line_if_fits.
float labelled_width(float frame_w, const char* label);

}  // namespace attn
