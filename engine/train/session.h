// Session: one training run, the part both front-ends share. It owns the Trainer and everything a run is beyond a
// step: the lecture's evaluation schedule, estimate_loss with the tokens/s since the evaluation before, the loss
// history, checkpoint contents (save, resume), the NaN/Inf guard with the last good state to revert to, the metrics
// CSV and injected faults (tests). The terminal (app/cli/headless.cpp) and the window's training thread
// (app/window/training_thread.cpp) drive it and hear from it through SessionEvents, so that a run with the same seed gives
// the same numbers in both by construction.
#pragma once
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "train/ablation.h"
#include "train/checkpoint.h"
#include "train/head_scores.h"
#include "train/trainer.h"

namespace attn {

// --inject-fault KIND@STEP, for tests: what goes wrong just before the STEP-th training step (once).
struct FaultInjection {
    enum class Kind { None, Nan, OutOfMemory, DeviceLost };
    Kind kind = Kind::None;
    int step = 0;
    std::string text;  // as typed, for messages
};
// Makes the fault happen when `tr` is about to take step f.step; returns true when it fired (then never again).
// nan: every weight of the first parameter tensor becomes NaN (through export_state/import_state), so the step's
// own GPU NaN/Inf check sees it; oom / device-lost: throws the DeviceError that VK_CHECK throws for
// VK_ERROR_OUT_OF_DEVICE_MEMORY / VK_ERROR_DEVICE_LOST.
bool inject_fault(Trainer& tr, FaultInjection& f);

// One evaluation: the losses and the training speed since the evaluation before.
struct SessionEval {
    RunHistory::Eval eval;   // step, train and val loss, tokens/s
    double ms_per_step = 0;  // mean wall time of the steps since the evaluation before (0: none)
};

// A sample of the current weights.
struct SessionSample {
    int step = 0;
    std::string prompt, text;
    std::vector<uint32_t> ids;  // the tokens sampled: text is their decode
    std::string left_out;  // the prompt's characters the corpus has no token for (Dataset::unknown_chars): not fed in
    double seconds = 0;    // how long it took
};

// What a run reports as it goes; a front-end overrides what it shows. Called on the thread driving the Session,
// from the call that caused it (evaluate, sample, save, step).
struct SessionEvents {
    virtual ~SessionEvents() = default;
    virtual void evaluated(const SessionEval&) {}
    virtual void sampled(const SessionSample&) {}
    virtual void checkpoint_written(const std::string& /*path*/, int /*step*/) {}
    // The step's loss was NaN or Inf (the weights are spoilt): the run should stop or revert_to_good.
    virtual void diverged(int /*step*/, double /*lr*/) {}
    // The device failed (DeviceError, rethrown after this): nothing on it can be read back; the last checkpoint and
    // the good state in host memory are what is left.
    virtual void device_failed(const std::string& /*what*/) {}
};

// One training step as the run saw it.
struct SessionStep {
    StepResult result;
    double seconds = 0;  // wall time of Trainer::step
};

class Session {
public:
    // Builds the Trainer (throws attn::Error with one line if the model cannot run; see Trainer). from: a checkpoint
    // whose run this continues (the caller checks first that it fits: check_resumable), built with its weights,
    // moments, RNG states, history and time-lapse, kept whole (set_history_budget after thins it). resume_note():
    // "" or a note for the user: the checkpoint holds no time-lapse (saved before they were recorded, or imported),
    // which starts at its step.
    Session(Context& ctx, const Dataset& data, const Config& cfg, int replicas = 0, const Checkpoint* from = nullptr);
    const std::string& resume_note() const { return m_resume_note; }

    Trainer& trainer() { return *m_trainer; }
    const Trainer& trainer() const { return *m_trainer; }
    const Config& config() const { return m_trainer->config(); }
    int step_count() const { return m_trainer->step_count(); }
    const RunHistory& history() const { return m_history; }
    void set_events(SessionEvents* events) { m_events = events; }
    void set_fault(const FaultInjection& f) { m_fault = f; }
    const FaultInjection& fault() const { return m_fault; }  // kind None once it fired

    // The lecture's schedule: an evaluation at every eval_interval-th step and at max_iters, once a step (a run
    // resumed at a step it evaluated before saving does not repeat it, which would shift the eval batches).
    bool evaluation_due() const;
    bool evaluated_at_current_step() const {
        return !m_history.evals.empty() && m_history.evals.back().step == step_count();
    }
    bool at_max_iters() const { return step_count() >= config().max_iters; }

    // One training step (the injected fault first, when this is its step): its loss joins the history; a NaN/Inf
    // loss marks the run diverged and tells the events. Throws DeviceError when the device fails.
    SessionStep step();
    bool diverged() const { return m_diverged; }

    // estimate_loss now: the history and the metrics CSV get the row, the events hear of it. Throws Interrupted
    // (the stop check) with nothing recorded. progress as Trainer::estimate_loss's.
    SessionEval evaluate(const std::function<void(int done, int total)>& progress = {});
    double last_tokens_per_s() const { return m_last_tps; }

    // n characters after `prompt` at the current weights, seeded (Trainer::generate); the events hear of it. Throws
    // Interrupted (the stop check) with the characters sampled so far.
    SessionSample sample(const std::string& prompt, int n_chars, uint64_t seed);
    // Mean wall time of the steps since the last evaluation (0: none yet), warm-up steps left out where others ran.
    double ms_per_step_since_eval() const { return m_speed.timed().ms_per_step(); }

    // The run as a checkpoint, and written to `path` (atomically; throws attn::Error). save remembers the step.
    Checkpoint checkpoint();
    void save(const std::string& path);
    int saved_step() const { return m_saved_step; }  // -1: nothing saved yet
    const std::string& saved_path() const { return m_saved_path; }

    // --metrics: step,train_loss,val_loss,tokens_per_s, a row per evaluation of the history (a resumed run's file
    // holds the whole run; after a revert, the rows up to the good state). A regular file is rewritten whole after
    // each evaluation, beside PATH and renamed over it, so a reader never finds it half written; a device or pipe
    // (/dev/stdout) gets the rows as they come. Throws attn::Error when the file cannot be written now; a later
    // failure is kept in metrics_error() (empty: the file is up to date).
    void write_metrics_to(const std::string& path);
    const std::string& metrics_error() const { return m_metrics_error; }

    // The attention time-lapse (train/timelapse.h): snapshots of the probe at the steps timelapse_due names and at
    // every evaluation, each taken before the step of that count runs (step 0: the initial weights).
    const TimeLapse& timelapse() const { return m_timelapse; }
    // The probe: the last block_size characters of `text`, those the corpus lacks kept in place, marked and given no
    // loss (timelapse.h, probe_chars). Returns "" or a note (the characters not in the corpus, the part cut off).
    // Throws attn::Error when the probe is empty or no character is known. Another probe than the
    // current one gets its views at every recorded step, computed from that step's weights (progress: (done, total)
    // before each); a history saved without weights (an older checkpoint) starts anew, and the note says so.
    std::string set_probe(const std::string& text, const std::function<void(int done, int total)>& progress = {});
    // The default probe: a whole line of the validation split of at most block_size characters (and at least half
    // of that), or else the whole words of its first line that fit.
    static std::string default_probe(const Dataset& data, int block_size);
    // Views at the recorded step nearest `step`, computed from its weights: any text's (tokens (P,), 1 <= P <=
    // block_size; text: as probe_tokens kept it, or "": every character known), and a sample of n_chars after `prompt` with `seed` (the same seed at every step shows what changed
    // in the model, not the dice). The live weights are put back after. Throws attn::Error when nothing is recorded
    // or that step was saved without its weights.
    ProbeSnapshot view_at(int step, const std::vector<uint32_t>& tokens, const std::string& text = {});
    SessionSample sample_at(int step, const std::string& prompt, int n_chars, uint64_t seed);
    // A probe's tokens as set_probe takes them (the last block_size characters, stand-ins for those the corpus
    // lacks); *note as set_probe returns it; *kept: those characters as typed (the time-lapse's text).
    static std::vector<uint32_t> probe_tokens(const Dataset& data, const std::string& text, int block_size,
                                              std::string* note, std::string* kept = nullptr);
    // Circuits (train/ablation.h), at the recorded step nearest `step` or at the live weights (step < 0), the live
    // weights put back after. Validation losses here are on fixed batches (fixed_batches() of them, drawn from
    // k_fixed_seed): the same at every step and every ablation, so their differences are the model's.
    static constexpr uint64_t k_fixed_seed = 0xab1a7e;
    int fixed_batches() const { return std::clamp(config().eval_iters, 1, 20); }
    struct Ablation {
        int step = 0;                   // the step whose weights were used
        ProbeSnapshot intact, ablated;  // the probe's views (tokens, text as view_at takes them)
        double val_intact = 0, val_ablated = 0;
    };
    // `heads` knocked out (zero or mean ablation): the probe and the validation loss, intact and ablated. Throws
    // attn::Error when the mode cannot apply to this model (ablate_weights) or the step has no weights.
    Ablation ablate(int step, const std::vector<HeadId>& heads, AblationMode mode, const std::vector<uint32_t>& tokens,
                    const std::string& text);
    // n_chars sampled after `prompt` with `heads` knocked out, seeded (the same seed as sample_at's shows what the
    // heads did to the model's writing).
    SessionSample sample_ablated(int step, const std::vector<HeadId>& heads, AblationMode mode,
                                 const std::string& prompt, int n_chars, uint64_t seed);
    // Head importance: the validation loss's increase when each head alone is knocked out, (L, NH) row-major;
    // *step_used: the step whose weights were used. progress: (done, total) before each head.
    std::vector<double> head_importance(int step, AblationMode mode, int* step_used = nullptr,
                                        const std::function<void(int done, int total)>& progress = {});
    // Every head's scores (train/head_scores.h), (L * NH,) layer-major, at the recorded step nearest `step`, from its
    // weights: previous, duplicate, first, current and entropy on the time-lapse's probe (its recorded view), induction
    // on the induction probes. Cached per step until the probe or the recorded steps change; *step_used: the step.
    const std::vector<HeadScores>& head_scores_at(int step, int* step_used = nullptr);
    // The validation loss at each position of the block (T,) at every recorded step (one row per snapshot, in order).
    std::vector<std::vector<double>> loss_by_position(const std::function<void(int done, int total)>& progress = {});
    // The same at one recorded step, the nearest `step` (cached per step until the recorded steps change);
    // *step_used: the step.
    const std::vector<double>& loss_by_position_at(int step, int* step_used = nullptr);
    // The time-lapse's memory budget; 0: nothing is recorded while training (record_probe still records).
    void set_history_budget(size_t bytes) {
        m_recording = bytes > 0;
        m_timelapse.set_budget(bytes > 0 ? bytes : m_timelapse.budget());
    }
    // A snapshot of the current weights unless one of this step is recorded; returns it (Trainer::probe).
    const ProbeSnapshot& record_probe();
    double recording_seconds() const { return m_record_s; }  // wall time spent in record_probe so far

    // The last good state, kept in host memory for Revert after divergence and for a rescue after a device
    // failure: models under k_good_state_params parameters, whose weights are finite.
    static constexpr size_t k_good_state_params = 50'000'000;
    bool can_keep_good_state() const { return m_trainer->num_params() < k_good_state_params; }
    bool keep_good_state();  // true when kept
    bool has_good_state() const { return m_has_good; }
    int good_step() const { return m_has_good ? m_good.state.step : -1; }
    void revert_to_good();                    // throws attn::Error when none is kept
    void save_good_state(const std::string& path);  // a checkpoint of it (the device need not answer)

private:
    std::string adopt(const Checkpoint& ck);  // after the checkpoint's weights are in: its history, time-lapse
    // Trainer::probe with the losses of characters the corpus lacks masked (mask_unknown)
    ProbeSnapshot probe_now(const std::vector<uint32_t>& tokens, const std::string& text);
    std::string m_resume_note;
    std::map<int, std::vector<HeadScores>> m_head_scores;  // head_scores_at's, by recorded step
    std::map<int, std::vector<double>> m_loss_by_position;   // loss_by_position_at's, by recorded step
    // Runs each(i) with snapshot i's weights in the trainer, for every recorded step (or only `only`), then puts the
    // live weights back (also when each throws).
    void with_recorded_weights(const std::function<void(size_t)>& each, size_t only = size_t(-1));
    size_t recorded_index(int step) const;
    // fn(step) with the weights of the recorded step nearest `step`, or the live ones (step < 0); the live weights
    // are put back after, also when fn changes them or throws.
    void at_weights(int step, const std::function<void(int)>& fn);  // the snapshot nearest `step`; throws when it has no weights

    Context& m_ctx;
    const Dataset& m_data;
    std::unique_ptr<Trainer> m_trainer;
    RunHistory m_history;
    SessionEvents* m_events = nullptr;
    TimeLapse m_timelapse;
    FaultInjection m_fault;
    bool m_diverged = false;
    // Training speed since the last evaluation (its tokens/s). The first steps of newly recorded programs
    // (StepResult::warmup) count apart: on a CPU driver they include compiling the pipelines, many times an
    // ordinary step, so they are the speed only where no other step ran.
    struct Interval {
        double seconds = 0;
        long tokens = 0;
        int steps = 0;
        double ms_per_step() const { return steps > 0 ? 1e3 * seconds / steps : 0; }
    };
    struct Speed {
        Interval ordinary, warmup;
        const Interval& timed() const { return ordinary.steps > 0 ? ordinary : warmup; }
    } m_speed;
    double m_last_tps = 0;  // stays when no step ran between two evaluations
    bool m_recording = true;  // the time-lapse records at its steps and evaluations
    double m_record_s = 0;
    int m_saved_step = -1;
    std::string m_saved_path;
    void update_metrics();       // the file after the history changed (a new row, a revert, a resume)
    std::string rewrite_metrics();  // the whole file, atomically; an error message or ""
    std::string m_metrics_path;  // empty: no --metrics
    bool m_metrics_stream = false;  // a device or pipe: rows appended to m_metrics as they come
    std::ofstream m_metrics;
    size_t m_metrics_rows = 0;  // history rows written to the stream
    std::string m_metrics_error;
    bool m_has_good = false;
    Checkpoint m_good;  // config, vocabulary and corpus of this run, state and history of the good step
};

}  // namespace attn
