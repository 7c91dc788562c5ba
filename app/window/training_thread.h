// The training thread: owns the run (a Session: the Trainer, its schedule, history and checkpoints), takes commands
// from the UI and publishes Snapshots under a mutex.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli.h"
#include "train/checkpoint.h"
#include "train/session.h"

namespace attn {

struct EvalPoint {
    int step = 0;
    double train = 0, val = 0;
    double tps = 0;  // training tokens/s since the previous evaluation (kept from before when no step ran), as headless
};

// A finished run kept for comparison on the loss plot (made when a run is reset or restarted).
struct FinishedRun {
    uint64_t id = 0;        // 1, 2, ... in order of finishing
    std::string name;       // preset + short description + final val loss
    std::vector<EvalPoint> evals;
};

// Mean GPU time of one kernel (by name) per step, over recent profiled steps.
struct KernelTime {
    std::string name;
    double ms = 0;   // summed over every dispatch of that name in a step
    int count = 0;   // dispatches of that name per step
};

struct SampleEntry {
    int step = 0;
    double val_loss = 0;  // the latest estimate when the sample was taken (0: none yet)
    std::string prompt, text;
    std::string left_out;  // the prompt's characters the corpus has no token for (Dataset::unknown_chars): not fed in
    std::vector<std::string> tokens;  // a run of BPE tokens: each sampled token's bytes (text joined), drawn apart
};

// Everything the UI draws, copied out under the lock.
struct Snapshot {
    uint64_t version = 0;
    int step = 0;
    bool running = false;
    bool has_model = false;
    std::string busy;             // what the thread is doing now, e.g. "building the model" (empty: idle/training)
    std::string heavy_note;       // Trainer::heavy_note and Config::speed_note of the model built (or empty)
    std::string message;          // last error or notice for the user
    bool message_until_start = false;  // message is a "paused; ... Start" notice, cleared when training starts again
    std::string restart_error;    // why the last Apply & restart was refused
    std::vector<float> step_losses;  // [i] = loss of step i+1
    std::vector<EvalPoint> evals;
    std::vector<SampleEntry> samples;  // oldest first
    // while the time-lapse is scrubbed: a sample computed from the shown step's weights, with the run's seed (the
    // same at every step, so scrubbing shows what changed in the model); step -1: none (live, or no weights kept)
    SampleEntry scrubbed_sample{-1};
    // attention of batch element att_element, layer att_layer, head att_head in the last step read:
    // (T,T), row = query, col = key
    std::vector<float> attention;
    std::vector<std::string> att_chars;  // the T input characters (a probe's as typed), or tokens' bytes
    bool bpe_tokens = false;              // the run reads byte-level BPE tokens: att_chars and top-5 are tokens
    std::vector<uint8_t> att_unknown;     // (T,) 1: a probe character the corpus lacks (fed as a stand-in, no loss)
    std::vector<uint32_t> att_tokens;
    int att_T = 0, att_element = 0, att_layer = 0, att_head = 0;
    double ms_per_step = 0, gpu_ms = 0, tokens_per_s = 0, it_per_s = 0;
    float grad_norm = -1;           // of the last update (StepResult::grad_norm): -1 when updates do not clip
    double sample_ms = 0;           // cost of the last sample
    int sample_every_steps = 0;     // auto-sample cadence that keeps sampling <= 1/20 of the time (k_sample_ratio)
    Config cfg;                     // the running config
    std::string corpus_name, corpus_path;
    bool lecture_corpus = false;  // tiny Shakespeare (Dataset::is_tiny_shakespeare): the lecture's losses apply
    size_t corpus_bytes = 0;
    int vocab = 0;
    // the corpus's characters (code points), for the window's fonts: shared, a new vector only with a new corpus
    std::shared_ptr<const std::vector<uint32_t>> vocab_chars;
    size_t params = 0;
    std::vector<FinishedRun> finished_runs;  // the last few finished runs, oldest first (ids keep counting)
    // the probe view (set_attention_probe): the maps above are the time-lapse snapshot of step probe_step, att_T its
    // length; probe_steps: every recorded step; probe_loss (att_T-1): each next character's loss; probe_top
    // (att_T x 5): the likeliest next characters after each position with their probabilities
    bool att_probe = false;
    int probe_step = -1;
    std::string probe_text;  // the time-lapse's probe
    std::string probe_note;  // what the last probe typed left out or cut (Session::set_probe's note), or ""
    std::vector<int> probe_steps;
    std::vector<float> probe_loss;
    std::vector<std::pair<std::string, float>> probe_top;
    // the shown head's row entropy (nats) and mean distance attended at each of probe_steps (summarize_head)
    std::vector<float> probe_entropy, probe_distance;
    // all-heads view (when asked for): (att_layers, att_heads, att_grid, att_grid), each T x T map averaged in blocks
    std::vector<float> att_all;
    // the Heads view (set_heads_view), in the probe view: every head's scores at probe_step (L * NH), and the shown
    // head's at every recorded step (probe_steps' order; empty for big models, whose every step would take long)
    std::vector<HeadScores> head_scores;
    std::vector<HeadScores> head_lines;
    int induction_rise_step = -1;  // the recorded step where the strongest induction score rose most (-1: none)
    // head importance (set_head_importance) at importance_step: the validation loss's increase with each head alone
    // knocked out (zero ablation), (L * NH,); importance_note: why none was computed (a big model), or ""
    std::vector<double> head_importance;
    int importance_step = -1;
    std::string importance_note;
    // in-context learning (set_icl), at every recorded step so far: the validation loss at each position of the
    // block on fixed batches (icl_curves, (steps, T)) and its ICL score (train/ablation.h icl_score); icl_note: why
    // none is computed (no recorded weights, a big model), or ""
    std::vector<int> icl_steps;
    std::vector<double> icl_scores;
    std::vector<std::vector<float>> icl_curves;
    std::string icl_note;
    // heads knocked out in the Heads view (set_knockout), zero ablation at probe_step (Session::ablate): the
    // validation loss on fixed batches and the probe's loss, intact and ablated (step -1: none computed yet)
    struct Knockout {
        std::vector<HeadId> heads;
        int step = -1;
        double val_intact = 0, val_ablated = 0, probe_intact = 0, probe_ablated = 0;
        std::string note;  // why nothing was computed (a big model), or ""
        std::vector<float> loss_intact, loss_ablated;  // the probe's per-character losses (P-1,)
        std::vector<std::string> top_intact, top_ablated;  // the likeliest next character after each position (P,)
        std::string sample;  // sampled with the heads out (the scrubbed sample's prompt, length and seed)
    };
    Knockout knockout;
    int att_grid = 0, att_layers = 0, att_heads = 0;
    // performance
    bool profiling = false;
    std::vector<KernelTime> kernel_times;  // mean over the last steps, largest first (empty: profiling off)
    int kernel_steps = 0;                  // how many steps kernel_times averages
    double train_s = 0, eval_s = 0, sample_s = 0, wall_s = 0;  // since the model was built (wall: pauses left out)
    size_t gpu_bytes = 0;                  // parameters, gradients, moments, activations and the corpus on the GPU
    int replicas = 1;                      // devices each step is split over (Trainer::replicas)
    uint64_t device_bytes = 0;             // everything allocated on the device (window and lab included)
    size_t timelapse_bytes = 0, timelapse_budget = 0;  // the attention time-lapse's host memory (Session::timelapse)
    int timelapse_snapshots = 0;
    size_t timelapse_weight_bytes = 0;  // of those bytes, the recorded steps' weights
    std::string timelapse_storage;      // "fp32 weights", "bf16 weights" or "attention only" (an older checkpoint)
    uint64_t model_id = 0;          // bumped on every (re)build, a loaded checkpoint included
    // checkpoints
    std::string ckpt_message;       // the last save/load/autosave outcome
    bool ckpt_error = false;        // ckpt_message is an error
    // The terminal's log: each new message and checkpoint outcome as a line, in order, so that two coming between
    // two polls (a Ctrl+S save, then an autosave) are both printed. The last k_log_kept lines of log_count so far.
    static constexpr size_t k_log_kept = 32;
    std::vector<std::string> log;
    uint64_t log_count = 0;
    // divergence: the loss became NaN/Inf; training paused
    bool diverged = false;
    int diverged_step = 0;
    float diverged_lr = 0;
    int good_step = -1;             // step of the last good state kept in memory (-1: none)
    bool keeps_good_state = false;  // the model is small enough to keep one (under ~50M parameters)
    bool done = false;              // --exit-after-steps reached, final eval and sample made
    bool fatal = false;             // the device failed: nothing more will happen
    std::string metrics_error;      // --metrics could not be written (empty: the file is up to date)
};

// Paused at max iters, Start (Space) trains this many steps more rather than on without a limit.
inline int more_steps(const Config& cfg) { return std::clamp(cfg.max_iters / 5, 100, 1000); }

class TrainingThread : private SessionEvents {
public:
    // exit_after_steps > 0: train that many steps, then evaluate, sample and set Snapshot::done.
    // fault: --inject-fault, made to happen at its step (tests). running false: the model is built and evaluated, then
    // waits for set_running (the window's resume prompt: no run trains behind it). metrics_path: --metrics, kept by
    // each run (Session::write_metrics_to), whose errors show in Snapshot::metrics_error. probe, history_bytes: the
    // time-lapse's text ("": the default) and memory budget (Session::set_probe, set_history_budget).
    TrainingThread(Context& ctx, Dataset data, const std::string& corpus_path, const Config& cfg, int exit_after_steps,
                   const FaultInjection& fault = {}, int replicas = 0, bool running = true,
                   const std::string& metrics_path = "", const std::string& probe = "",
                   size_t history_bytes = TimeLapse::k_default_budget);
    ~TrainingThread();  // stop()s
    // Ends the thread (autosaving first when autosave is on); the last Snapshot stays readable with poll().
    void stop();
    TrainingThread(const TrainingThread&) = delete;
    TrainingThread& operator=(const TrainingThread&) = delete;

    void set_running(bool on);
    void toggle_running();
    void step_once();
    // Slow motion: at most `per_s` training steps a second (0: as fast as it goes).
    void set_max_steps_per_s(double per_s);
    void reset();  // new weights, same config; histories cleared
    void restart(const Config& cfg, const std::string& corpus_path);
    void set_live(const Config& cfg);
    // The Lab's encoder toggle: the live model's causal mask on (decoder) or off (encoder), from the next step.
    void set_causal(bool on);
    void request_sample();
    // Checkpoints, on the training thread; the outcome shows in Snapshot::ckpt_message.
    void save_checkpoint_to(const std::string& path);
    // then_run: and train on (the resume prompt), unless the run loaded is at its max iters (it stays paused there).
    // offered_autosave: the file is the autosave the resume prompt offered; one that fails to load is set aside (the
    // fresh run's autosave would overwrite it).
    void load_checkpoint_from(const std::string& path, bool then_run = false, bool offered_autosave = false);
    // Autosave to `path` every `minutes` (fractions allowed; 0: off) and when the thread stops. After a device
    // failure the last good state kept in memory goes to `path` too, whatever `minutes`.
    void set_autosave(double minutes, const std::string& path);
    // After divergence: back to the last good state kept in memory, paused.
    void revert_to_good();
    void set_prompt(const std::string& prompt);
    // Which map to show: batch element b (from the next step on), layer, head.
    void set_attention_view(int b, int layer, int head);
    // Whether to publish every layer x head (downsampled) for the all-heads grid.
    void set_attention_all(bool on);
    // Head scores for the probe view (Session::head_scores_at), computed while on
    void set_heads_view(bool on);
    // Heads knocked out (zero ablation) in the Heads view: their effect at the shown step, computed while it is on
    void set_knockout(const std::vector<HeadId>& heads);
    // Head importance in the Heads view (Session::head_importance at the shown step), computed while on
    void set_head_importance(bool on);
    // In-context learning on the loss plot (Session::loss_by_position_at at every recorded step), computed while on
    void set_icl(bool on);
    // The Attention panel's source: the training batch (false), or the time-lapse's probe at the recorded step
    // nearest `step` (-1: the latest, following training).
    void set_attention_probe(bool on, int step = -1);
    // Another probe text (Session::set_probe): a new time-lapse, its first snapshot at the current weights now.
    void set_probe_text(const std::string& text);
    // Per-kernel GPU timestamps for the performance panel (a little extra cost per step).
    void set_profiling(bool on);
    // The window's frame rate: attention is read back no more often than it can be shown.
    void set_frame_rate(int fps);

    // Copies the snapshot into `out` when it changed since out.version; returns whether it did.
    bool poll(Snapshot& out);

private:
    using Clock = std::chrono::steady_clock;
    // Auto-sampling: a new sample once training took this many times the last sample (sampling <= 1/20 of the time).
    static constexpr double k_sample_ratio = 19.0;
    // Paused (max iters, Space, Step once), the samples are brought up to the weights at once where a sample takes
    // at most this long; a bigger model's waits for Sample now.
    static constexpr double k_paused_sample_ms = 1000.0;
    // The Heads view's lines over every recorded step: models up to this many parameters (the lecture's presets),
    // whose each step's scores take milliseconds; a bigger model's scores are computed at the shown step only.
    static constexpr size_t k_head_lines_params = 2'000'000;
    struct Pending {
        bool running = true;
        int step_once = 0;
        bool reset = false, restart = false, live = false, sample = false, reslice = false, quit = false;
        int causal = -1;  // set_causal: 1 on, 0 off, -1 nothing pending
        std::string save_path, load_path;  // non-empty: save / load pending
        bool load_is_autosave = false;     // load_path is the autosave offered at start
        bool revert = false;
        double autosave_min = 0;
        double max_steps_per_s = 0;  // slow motion; 0: full speed
        std::string autosave_path;
        bool att_all = false, profiling = true, profiling_changed = true;
        bool heads_view = false, importance = false, icl = false;
        std::vector<HeadId> knockout;
        int frame_rate = 30;
        Config restart_cfg, live_cfg;
        std::string restart_path, prompt;
        int att_element = 0, att_layer = 0, att_head = 0;
        bool att_probe = false;
        int att_probe_step = -1;
        std::string probe_text;  // set_probe_text: not empty until taken
    };
    void set_running_locked(bool on);  // set_running with m_mutex held, without the wake-up
    void start_new_run(Pending& p);  // a new model (launch, Reset, Apply & restart) trains at once
    // Changes the pending commands under the lock and wakes the thread.
    template <typename F>
    void post(F&& change) {
        {
            std::lock_guard lk(m_mutex);
            change(m_pending);
        }
        m_cv.notify_all();
    }
    void run();
    bool has_work() const;
    bool step_due() const;  // slow motion allows a running step now (m_mutex held)
    // preview: the attention map at once; from: a checkpoint the new run continues (its weights, history and
    // time-lapse; no random initialisation first)
    void build(const Config& cfg, bool eval_start = true, bool preview = true, const Checkpoint* from = nullptr);
    void save_to(const std::string& path);  // throws attn::Error
    void load_from(const std::string& path);
    void keep_good_state();
    void show_history_locked();  // Snapshot's step, losses and evaluations from the run's history; m_mutex held
    void drop_run();
    void evaluated(const SessionEval& e) override;   // the evaluation joins the snapshot's curves
    void diverged(int step, double lr) override;     // says so and pauses             // ends the run (before a rebuild), keeping an injected fault that has not fired
    void autosave(const Pending& p, bool now);
    void do_revert();
    std::string rescue(const std::string& path);  // after a DeviceError: saves the last good state; says what it did
    std::string keep_unloadable_autosave(const Pending& p);  // a failed load of the offered autosave: set aside
    void do_step(bool force_attention);
    void do_eval();
    void do_sample();
    // Each sampled token's bytes for a run of BPE tokens (the Samples panel draws them apart); none for characters.
    std::vector<std::string> token_pieces(const std::vector<uint32_t>& ids) const;
    void slice_attention();
    void show_attention_now();
    void say_busy(std::string what);  // the Controls panel's busy line (BUSY in the status bar) until cleared
    void publish();  // bumps the version and logs a new message or checkpoint outcome; call with m_mutex held
    std::string m_logged_message, m_logged_ckpt;  // the last ones publish logged
    void no_checkpoint_path(const char* what);
    void keep_finished_run();  // the current run's curves as a FinishedRun, before a rebuild; call with m_mutex held
    void update_profile();     // folds the last step's kernel times into the running means

    Context& m_ctx;
    std::unique_ptr<Dataset> m_data;  // outlives m_run, whose Trainer holds a reference
    std::unique_ptr<Session> m_run;  // the run being trained (null until the first build)
    std::string m_corpus_path;
    int m_exit_after = 0;
    std::vector<float> m_att_full;  // (n_layer, NH, T, T) of element m_shown_b, read after a step
    int m_shown_b = 0;              // the batch element m_att_full belongs to
    std::chrono::steady_clock::time_point m_last_att_read{};
    std::chrono::steady_clock::time_point m_last_profiled{};  // the last step run with kernel timestamps
    int m_gpu_readings = 0;  // GPU times of whole steps averaged into Snapshot::gpu_ms since the model was built
    double m_gpu_share = 0;  // their mean share of their steps' wall time
    bool m_wall_from_warmup = false;  // Snapshot::ms_per_step is a warm-up step's (StepResult::warmup)
    int m_sample_step = -1;           // the step of the last sample, and how many came before it at that step
    uint64_t m_sample_repeat = 0;
    double m_train_s_since_sample = 0;
    bool m_weights_changed = true;
    // What a sample costs, for the schedule: 0 until a model's second sample, since its first also compiles the
    // generation pipelines (on a CPU driver with an empty shader cache, many times the sampling itself)
    double m_sample_cost_ms = 0;
    bool m_sampled_since_build = false;
    Config m_cfg;  // copy for the thread (live values included)
    std::string m_prompt;
    int m_att_element = 0, m_att_layer = 0, m_att_head = 0;
    bool m_att_all = false;
    bool m_heads_view = false;
    std::string m_lines_key;  // what head_lines were computed for
    std::vector<HeadId> m_knockout;
    std::string m_knockout_key;  // what m_snap.knockout was computed for
    bool m_importance = false;
    bool m_icl = false;
    std::string m_icl_key;  // the recorded steps the snapshot's ICL curves are of ("": none published)
    std::string m_importance_key;  // what m_snap.head_importance was computed for
    std::vector<HeadScores> m_lines;
    int m_rise_step = -1;
    bool m_att_probe = false;    // the probe view
    int m_att_probe_step = -1;   // its step (-1: the latest)
    std::chrono::steady_clock::duration m_att_period = std::chrono::milliseconds(33);
    std::vector<std::vector<std::pair<std::string, double>>> m_kernel_hist;  // last steps' kernel times, ring
    size_t m_kernel_next = 0;
    std::chrono::steady_clock::time_point m_built_at{};
    std::chrono::steady_clock::duration m_idle{};  // time since m_built_at spent waiting for work (paused)
    double active_s(std::chrono::steady_clock::time_point now) const {  // wall time since the build, pauses left out
        return std::chrono::duration<double>(now - m_built_at - m_idle).count();
    }
    uint64_t m_finished_total = 0;
    Config m_last_finished_cfg;  // the last run kept as a ghost: what the next one changed (its name says)
    uint64_t m_model_id = 0;
    std::chrono::steady_clock::time_point m_last_autosave{};
    int m_autosaved_step = -1;
    Clock::time_point m_next_step_at{};  // slow motion: no running step before this
    std::string m_summary_key;  // what m_summary_* were computed for (slice_attention)
    std::string m_scrub_key;    // what m_snap.scrubbed_sample was computed for: step and prompt
    std::vector<float> m_summary_entropy, m_summary_distance;
    bool m_autosave_off = false;  // an autosave that failed to load could not be set aside: never overwrite it
    FaultInjection m_fault;  // --inject-fault, until it fires (the run holds it while there is one)
    int m_replicas = 0;      // --replicas (0: auto)
    std::string m_metrics_path;  // --metrics (empty: none)
    std::string m_probe;         // --probe (empty: Session::default_probe)
    size_t m_history_bytes;      // --history-mib
    void note_metrics_locked();  // Snapshot::metrics_error from the run; m_mutex held

    std::atomic<bool> m_quitting{false};  // stop(): evaluations and samples under way end early (Interrupted)
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    Pending m_pending;
    Snapshot m_snap;
    std::thread m_thread;
};

}  // namespace attn
