// The training thread: steps, evaluates and samples beside the UI; all UI-visible state goes through Snapshot.
#include "training_thread.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>

#include "model/model.h"

namespace attn {

TrainingThread::TrainingThread(Context& ctx, Dataset data, const std::string& corpus_path, const Config& cfg,
                               int exit_after_steps, const FaultInjection& fault, int replicas, bool running,
                               const std::string& metrics_path, const std::string& probe, size_t history_bytes)
    : m_ctx(ctx), m_data(std::make_unique<Dataset>(std::move(data))), m_corpus_path(corpus_path),
      m_exit_after(exit_after_steps), m_cfg(cfg), m_fault(fault), m_replicas(replicas), m_metrics_path(metrics_path),
      m_probe(probe), m_history_bytes(history_bytes) {
    m_snap.cfg = cfg;
    m_snap.corpus_path = corpus_path;
    m_snap.version = 1;  // a fresh Snapshot (version 0) always takes this first copy
    m_pending.running = running;
    m_snap.running = running;
    m_thread = std::thread([this] { run(); });
}

TrainingThread::~TrainingThread() { stop(); }

void TrainingThread::stop() {
    m_quitting = true;  // a long evaluation or sample (big models on a CPU) stops at its next batch or character
    {
        std::lock_guard lk(m_mutex);
        m_pending.quit = true;
    }
    m_cv.notify_all();
    if (m_thread.joinable()) m_thread.join();
}

void TrainingThread::set_running(bool on) {
    std::lock_guard lk(m_mutex);
    set_running_locked(on);
    m_cv.notify_all();
}
void TrainingThread::set_running_locked(bool on) {
    m_pending.running = on;
    m_snap.running = on;
    if (on && m_snap.message_until_start) {  // "reached max iters: paused; Start continues" no longer holds
        m_snap.message.clear();
        m_snap.message_until_start = false;
    }
    publish();
}

// One rule for every new model (the first launch, Reset, Apply & restart): it trains at once; a loaded checkpoint
// or a revert waits paused where it was. `p` is this turn's copy of the pending commands.
void TrainingThread::start_new_run(Pending& p) {
    if (!m_run || m_snap.fatal) return;
    p.running = true;
    std::lock_guard lk(m_mutex);
    set_running_locked(true);
}

void TrainingThread::toggle_running() {
    bool on;
    {
        std::lock_guard lk(m_mutex);
        on = !m_pending.running;
    }
    set_running(on);
}

void TrainingThread::step_once() { post([](Pending& p) { p.step_once++; }); }
void TrainingThread::reset() { post([](Pending& p) { p.reset = true; }); }
void TrainingThread::restart(const Config& cfg, const std::string& path) {
    post([&](Pending& p) {
        p.restart = true;
        p.restart_cfg = cfg;
        p.restart_path = path;
    });
}
void TrainingThread::set_causal(bool on) { post([&](Pending& p) { p.causal = on ? 1 : 0; }); }
void TrainingThread::set_live(const Config& cfg) {
    post([&](Pending& p) {
        p.live = true;
        p.live_cfg = cfg;
    });
}
void TrainingThread::save_checkpoint_to(const std::string& path) {
    if (path.empty()) return no_checkpoint_path("save");
    post([&](Pending& p) { p.save_path = path; });
}
void TrainingThread::load_checkpoint_from(const std::string& path, bool then_run, bool offered_autosave) {
    if (path.empty()) return no_checkpoint_path("load");
    {
        std::lock_guard lk(m_mutex);
        m_pending.load_path = path;
        m_pending.load_is_autosave = offered_autosave;
        // with the load: resumed from the prompt, it trains on (one at its max iters stays paused, load_from); a
        // checkpoint loaded with Ctrl+O waits paused where it was, to be looked at
        set_running_locked(then_run);
    }
    m_cv.notify_all();
}
// Ctrl+S / Ctrl+O with the Checkpoint field empty: said on the checkpoint line instead of nothing happening.
void TrainingThread::no_checkpoint_path(const char* what) {
    std::lock_guard lk(m_mutex);
    m_snap.ckpt_message = std::string(what) + " failed: the Checkpoint field is empty: type a file name";
    m_snap.ckpt_error = true;
    publish();
}
void TrainingThread::set_max_steps_per_s(double per_s) {
    post([&](Pending& p) { p.max_steps_per_s = std::isfinite(per_s) ? std::max(0.0, per_s) : 0.0; });
}
void TrainingThread::revert_to_good() { post([](Pending& p) { p.revert = true; }); }
void TrainingThread::set_autosave(double minutes, const std::string& path) {
    std::lock_guard lk(m_mutex);  // read before the next step: no wake-up needed
    m_pending.autosave_min = std::isfinite(minutes) ? std::max(0.0, minutes) : 0.0;
    m_pending.autosave_path = path;
}
void TrainingThread::request_sample() { post([](Pending& p) { p.sample = true; }); }
void TrainingThread::set_prompt(const std::string& prompt) { post([&](Pending& p) { p.prompt = prompt; }); }
void TrainingThread::set_attention_view(int b, int layer, int head) {
    post([&](Pending& p) {
        p.att_element = b;
        p.att_layer = layer;
        p.att_head = head;
        p.reslice = true;
    });
}

void TrainingThread::set_attention_all(bool on) {
    post([&](Pending& p) {
        if (p.att_all != on) p.reslice = true;
        p.att_all = on;
    });
}
void TrainingThread::set_knockout(const std::vector<HeadId>& heads) {
    post([&](Pending& p) {
        p.knockout = heads;
        p.reslice = true;
    });
}
void TrainingThread::set_head_importance(bool on) {
    post([&](Pending& p) {
        if (p.importance != on) p.reslice = true;
        p.importance = on;
    });
}
void TrainingThread::set_icl(bool on) {
    post([&](Pending& p) {
        if (p.icl != on) p.reslice = true;
        p.icl = on;
    });
}
void TrainingThread::set_heads_view(bool on) {
    post([&](Pending& p) {
        if (p.heads_view != on) p.reslice = true;
        p.heads_view = on;
    });
}
void TrainingThread::set_attention_probe(bool on, int step) {
    post([&](Pending& p) {
        p.att_probe = on;
        p.att_probe_step = step;
        p.reslice = true;
    });
}
void TrainingThread::set_probe_text(const std::string& text) {
    post([&](Pending& p) {
        p.probe_text = text;
        p.reslice = true;
    });
}
void TrainingThread::set_profiling(bool on) {
    post([&](Pending& p) {
        if (p.profiling != on) p.profiling_changed = true;
        p.profiling = on;
    });
}
void TrainingThread::set_frame_rate(int fps) {
    std::lock_guard lk(m_mutex);  // no wake-up needed: read before the next step
    m_pending.frame_rate = std::clamp(fps, 1, 240);
}

bool TrainingThread::poll(Snapshot& out) {
    std::lock_guard lk(m_mutex);
    if (out.version == m_snap.version) return false;
    out = m_snap;
    return true;
}

void TrainingThread::publish() {
    auto log = [&](std::string line) {
        if (m_snap.log.size() == Snapshot::k_log_kept) m_snap.log.erase(m_snap.log.begin());
        m_snap.log.push_back(std::move(line));
        m_snap.log_count++;
    };
    if (m_snap.message != m_logged_message) {
        m_logged_message = m_snap.message;
        if (!m_snap.message.empty()) log(m_snap.message);
    }
    if (m_snap.ckpt_message != m_logged_ckpt) {
        m_logged_ckpt = m_snap.ckpt_message;
        if (!m_snap.ckpt_message.empty()) log((m_snap.ckpt_error ? "error: " : "") + m_snap.ckpt_message);
    }
    m_snap.version++;
}

// e.g. "multi-head L1 H4x8 C32 T8 ffn: val 2.281"
static std::string run_name(const Config& c, double val) {
    std::string d = c.preset;
    if (c.kind == ModelKind::Bigram) {
        d += " T" + std::to_string(c.block_size);
    } else {
        d += " L" + std::to_string(c.n_layer) + " H" + std::to_string(c.n_head) + "x" + std::to_string(c.hs()) + " C" +
             std::to_string(c.n_embd) + " T" + std::to_string(c.block_size);
        if (c.ffn) d += " ffn";
        if (c.residual) d += " res";
        if (c.layernorm) d += " ln";
        if (c.dropout > 0) {
            char buf[24];
            std::snprintf(buf, sizeof buf, " drop%.2g", c.dropout);
            d += buf;
        }
        if (!c.causal) d += " no-mask";
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, ": val %.3f", val);
    return d + buf;
}

void TrainingThread::keep_finished_run() {
    Snapshot& s = m_snap;
    if (!s.has_model || s.evals.empty() || s.evals.back().step <= 0) return;  // nothing trained: nothing to compare
    FinishedRun r;
    r.id = ++m_finished_total;
    // "#2 single-head L1 H1x32 C32 T8 (seed 42): val 2.412": numbered, with what differs from the run before
    r.name = "#" + std::to_string(r.id) + " " + run_name(s.cfg, s.evals.back().val);
    if (m_finished_total > 1) {
        std::string diff = s.cfg.differences_from(m_last_finished_cfg);
        size_t colon = r.name.rfind(": val");
        r.name.insert(colon, " (" + (diff.empty() ? std::string("same settings as #") + std::to_string(r.id - 1) : diff) + ")");
    }
    m_last_finished_cfg = s.cfg;
    r.evals = s.evals;
    s.finished_runs.push_back(std::move(r));
    if (s.finished_runs.size() > 8) s.finished_runs.erase(s.finished_runs.begin());
}

void TrainingThread::update_profile() {
    auto times = m_run->trainer().last_kernel_times();
    if (times.empty()) return;
    const size_t keep = 32;
    if (m_kernel_hist.size() < keep) m_kernel_hist.push_back(std::move(times));
    else m_kernel_hist[m_kernel_next] = std::move(times);
    m_kernel_next = (m_kernel_next + 1) % keep;
    std::map<std::string, KernelTime> by_name;
    for (auto& step : m_kernel_hist)
        for (auto& [name, ms] : step) {
            KernelTime& k = by_name[name];
            k.ms += ms;
            k.count++;
        }
    std::vector<KernelTime> out;
    double n = double(m_kernel_hist.size());
    for (auto& [name, k] : by_name) out.push_back({name, k.ms / n, int(k.count / n + 0.5)});
    std::sort(out.begin(), out.end(), [](const KernelTime& a, const KernelTime& b) { return a.ms > b.ms; });
    std::lock_guard lk(m_mutex);
    m_snap.kernel_times = std::move(out);
    m_snap.kernel_steps = int(m_kernel_hist.size());
}

bool TrainingThread::has_work() const {
    const Pending& p = m_pending;
    if (p.quit || p.reset || p.restart || p.live || p.sample || p.reslice || p.profiling_changed) return true;
    if (p.causal >= 0 || p.revert || !p.save_path.empty() || !p.load_path.empty()) return true;
    if (!m_run || m_snap.fatal) return false;
    bool finished = m_exit_after > 0 && m_run->trainer().step_count() >= m_exit_after;
    return !finished && (p.step_once > 0 || (p.running && step_due()));
}

bool TrainingThread::step_due() const {
    return m_pending.max_steps_per_s <= 0 || Clock::now() >= m_next_step_at;
}

void TrainingThread::say_busy(std::string what) {
    std::lock_guard lk(m_mutex);
    m_snap.busy = std::move(what);
    publish();
}

void TrainingThread::build(const Config& cfg, bool eval_start, bool preview, const Checkpoint* from) {
    say_busy(from ? "building the model with the loaded weights" : "building the model (compiling shaders)");
    drop_run();
    auto t_build = Clock::now();
    m_run = std::make_unique<Session>(m_ctx, *m_data, cfg, m_replicas, from);
    m_icl_key.clear();  // another run: its curves are computed anew
    m_run->set_fault(m_fault);  // --inject-fault: once, until it fires (a rebuilt model keeps what is left of it)
    m_run->set_events(this);
    m_run->set_history_budget(m_history_bytes);
    if (!m_probe.empty() && !(from && !from->timelapse.empty())) {  // a loaded time-lapse keeps its own probe
        try {
            std::string note = m_run->set_probe(m_probe);
            if (!note.empty()) std::printf("attnlab: %s\n", note.c_str());
        } catch (const Error& e) {  // this corpus knows none of its characters: the default probe stays
            std::printf("attnlab: %s; the time-lapse records the default probe\n", e.what());
        }
    }
    if (!m_metrics_path.empty()) {  // the new run's rows replace the last one's (its evaluations follow)
        try {
            m_run->write_metrics_to(m_metrics_path);
        } catch (const Error&) {  // kept in metrics_error, shown below
        }
    }
    m_run->trainer().set_stop_check([this] { return m_quitting.load(); });
    // for a terminal (and the tests): which model trains now, and how long building it took
    std::printf("attnlab: built preset %s, %zu parameters, in %.1f s%s\n", cfg.preset.c_str(), m_run->trainer().num_params(),
                std::chrono::duration<double>(Clock::now() - t_build).count(),
                eval_start ? "; estimating the loss" : "");
    // printed here, shown in the snapshot (the Controls panel): a GPU job on this CPU driver, a width off the fast paths
    std::string heavy = Trainer::heavy_note(m_ctx, cfg, m_data->vocab_size());
    if (!heavy.empty()) std::printf("attnlab: note: %s\n", heavy.c_str());
    if (std::string slow = cfg.speed_note(); !slow.empty()) {
        std::printf("attnlab: note: %s\n", slow.c_str());
        heavy += (heavy.empty() ? "" : "; ") + slow;
    }
    std::fflush(stdout);
    bool profiling;
    {
        std::lock_guard lk(m_mutex);
        profiling = m_pending.profiling;
        m_pending.profiling_changed = false;
    }
    m_run->trainer().set_profiling(profiling);
    m_kernel_hist.clear();
    m_kernel_next = 0;
    m_built_at = Clock::now();
    m_idle = {};
    m_cfg = cfg;
    m_att_full.clear();
    m_run->trainer().set_display_batch(std::clamp(m_att_element, 0, cfg.batch_size - 1));
    m_shown_b = m_run->trainer().display_batch();
    m_train_s_since_sample = 0;
    m_weights_changed = true;
    m_sample_cost_ms = 0;
    m_sampled_since_build = false;
    m_autosaved_step = -1;  // the autosave holds the previous model's step, if any: not this one's
    m_last_autosave = {};
    {
        std::lock_guard lk(m_mutex);
        Snapshot& s = m_snap;
        keep_finished_run();
        s.step = 0;
        s.has_model = true;
        s.att_all.clear();
        s.att_grid = s.att_layers = s.att_heads = 0;
        s.profiling = profiling;
        s.kernel_times.clear();
        s.kernel_steps = 0;
        s.train_s = s.eval_s = s.sample_s = s.wall_s = 0;
        s.grad_norm = -1;
        s.ms_per_step = s.gpu_ms = s.tokens_per_s = 0;  // smoothed over steps: the new model's own from its first
        m_gpu_readings = 0;
        m_gpu_share = 0;
        m_sample_step = -1;
        s.heavy_note = heavy;
        s.gpu_bytes = Model::bytes_needed(cfg, m_data->vocab_size()) + m_data->tokens().size() * sizeof(uint32_t) +
                      m_run->trainer().replica_bytes();
        s.replicas = m_run->trainer().replicas();
        s.step_losses.clear();
        s.evals.clear();
        s.samples.clear();
        s.attention.clear();
        s.att_chars.clear();
        s.att_tokens.clear();
        s.att_T = 0;
        s.sample_ms = 0;
        s.cfg = cfg;
        s.corpus_name = m_data->name();
        s.corpus_path = m_corpus_path;
        s.lecture_corpus = m_data->is_tiny_shakespeare();
        s.corpus_bytes = m_data->bytes();
        s.vocab = m_data->vocab_size();
        if (!s.vocab_chars || *s.vocab_chars != m_data->characters())
            s.vocab_chars = std::make_shared<const std::vector<uint32_t>>(m_data->characters());
        s.bpe_tokens = m_data->bpe() != nullptr;
        s.params = m_run->trainer().num_params();
        s.done = false;
        s.model_id = ++m_model_id;
        s.diverged = false;
        s.good_step = -1;
        s.keeps_good_state = m_run->can_keep_good_state();
        note_metrics_locked();
        publish();
    }
    if (preview) show_attention_now();
    if (eval_start) {
        keep_good_state();
        do_eval();  // the lecture prints step 0 too
    }
}

void TrainingThread::note_metrics_locked() {
    if (m_run) m_snap.metrics_error = m_run->metrics_error();
}

// SessionEvents, from the run's calls on this thread
void TrainingThread::evaluated(const SessionEval& e) {
    std::lock_guard lk(m_mutex);
    m_snap.evals.push_back({e.eval.step, e.eval.train, e.eval.val, e.eval.tps});
}

void TrainingThread::diverged(int step, double lr) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", lr);
    std::lock_guard lk(m_mutex);
    Snapshot& s = m_snap;
    s.message = "The loss became NaN/Inf at step " + std::to_string(step) + ": learning rate " + text +
                " is probably too high. Training is paused.";
    s.diverged = true;
    s.diverged_step = step;
    s.diverged_lr = float(lr);
    m_pending.running = false;
    m_pending.step_once = 0;
    s.running = false;
}

void TrainingThread::do_eval() {
    say_busy("estimating the loss");
    auto t0 = Clock::now();
    auto shown = t0;
    // a long evaluation (the gpt preset's on a CPU: minutes) shows how far it has got, twice a second at most
    auto progress = [&](int done, int total) {
        if (Clock::now() - shown < std::chrono::milliseconds(500)) return;
        shown = Clock::now();
        std::lock_guard lk(m_mutex);
        m_snap.busy = "estimating the loss: batch " + std::to_string(done + 1) + " of " + std::to_string(total);
        publish();
    };
    SessionEval e;
    try {
        e = m_run->evaluate(progress);  // the history and the run's tokens/s too
    } catch (const Interrupted&) {  // quitting: the trainer is as before the evaluation
        std::lock_guard lk(m_mutex);
        m_snap.busy.clear();
        publish();
        return;
    }
    double s_eval = std::chrono::duration<double>(Clock::now() - t0).count();
    std::lock_guard lk(m_mutex);
    m_snap.eval_s += s_eval;
    m_snap.wall_s = active_s(Clock::now());
    note_metrics_locked();
    m_snap.busy.clear();
    publish();
}

std::vector<std::string> TrainingThread::token_pieces(const std::vector<uint32_t>& ids) const {
    std::vector<std::string> out;
    if (m_data->bpe())
        for (uint32_t id : ids) out.push_back(m_data->decode(id));
    return out;
}

void TrainingThread::do_sample() {
    std::string prompt;
    {
        std::lock_guard lk(m_mutex);
        prompt = m_pending.prompt;
    }
    auto t0 = Clock::now();
    int step = m_run->trainer().step_count();
    // the first sample at a step as headless draws it (seed + step); another at the same step (Sample now while
    // paused) a fresh one, not the same text again
    m_sample_repeat = step == m_sample_step ? m_sample_repeat + 1 : 0;
    m_sample_step = step;
    uint64_t seed = m_cfg.seed + uint64_t(step) + m_sample_repeat * 0x9E3779B97F4A7C15ull;
    SessionSample sample;
    try {
        sample = m_run->sample(prompt, m_cfg.sample_chars, seed);
    } catch (const Interrupted&) {  // quitting
        return;
    }
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    m_train_s_since_sample = 0;
    m_weights_changed = false;
    m_sample_cost_ms = m_sampled_since_build ? ms : 0;
    m_sampled_since_build = true;
    std::lock_guard lk(m_mutex);
    Snapshot& s = m_snap;
    s.samples.push_back({step, s.evals.empty() ? 0.0 : s.evals.back().val, prompt, std::move(sample.text),
                         std::move(sample.left_out), token_pieces(sample.ids)});
    if (s.samples.size() > 200) s.samples.erase(s.samples.begin());
    s.sample_ms = ms;
    s.sample_s += ms * 1e-3;
    s.wall_s = active_s(Clock::now());
    s.sample_every_steps = s.ms_per_step > 0 && m_sample_cost_ms > 0
                               ? std::max(1, int(k_sample_ratio * m_sample_cost_ms / s.ms_per_step + 0.5))
                               : 0;
    publish();
}

void TrainingThread::do_step(bool force_attention) {
    int b = m_run->trainer().display_batch();
    auto t0 = Clock::now();
    // kernel profiling: about two steps a second run with timestamps (every step would cost lavapipe ~40%), none of
    // the first steps of new programs (StepResult::warmup: a table of a few steps would be theirs)
    if (m_snap.profiling && !m_run->trainer().warming_up() && t0 - m_last_profiled >= std::chrono::milliseconds(500)) {
        m_run->trainer().profile_next_step();
        m_last_profiled = t0;
    }
    SessionStep ss = m_run->step();  // the injected fault, the step, its loss in the history, the NaN/Inf guard
    const StepResult& r = ss.result;
    auto t1 = Clock::now();
    double s_step = ss.seconds;
    m_train_s_since_sample += s_step;
    m_weights_changed = true;
    int step = m_run->trainer().step_count();
    if (r.profiled && !r.warmup) update_profile();  // a cold warm-up step (one that re-recorded) would skew the table
    // Every step while steps are slower than the screen; otherwise once per frame is all anyone can see.
    bool read = force_attention || t1 - m_last_att_read >= m_att_period ||
                (m_exit_after > 0 && step >= m_exit_after);
    if (read) {
        m_last_att_read = t1;
        m_shown_b = b;
        if (m_cfg.kind != ModelKind::Bigram) m_att_full = m_run->trainer().read_attention();
        slice_attention();
    }
    {
        std::lock_guard lk(m_mutex);
        Snapshot& s = m_snap;
        s.step = step;
        s.step_losses.push_back(r.loss);
        s.grad_norm = r.grad_norm;
        double ms = s_step * 1e3;
        // a warm-up step's time is shown only until the first ordinary step, which starts the smoothing afresh
        bool reseed = s.ms_per_step <= 0 || r.warmup || m_wall_from_warmup;
        s.ms_per_step = reseed ? ms : 0.9 * s.ms_per_step + 0.1 * ms;
        m_wall_from_warmup = r.warmup;
        // GPU time as the share of a timed step's own wall time, times the smoothed wall time: readings come about
        // every 200 ms, from steps that need not be typical (one drawn beside a frame runs long), and GPU time
        // averaged apart from the wall time read above it (layernorm on 2 devices: "2.03 ms wall | GPU 2.32").
        // The first readings averaged (a lecture preset's run of a few seconds has a few dozen), the first steps
        // of new programs left out (a cold first run reads many times a warm one's).
        if (r.gpu_timed && !r.warmup && ms > 0) {
            m_gpu_readings++;
            m_gpu_share += (std::min(1.0, r.gpu_ms / ms) - m_gpu_share) / std::min(m_gpu_readings, 10);
        }
        s.gpu_ms = m_gpu_readings > 0 ? m_gpu_share * s.ms_per_step : 0;
        s.train_s += s_step;
        s.wall_s = active_s(t1);
        s.device_bytes = m_ctx.allocated_bytes();
        s.timelapse_bytes = m_run->timelapse().bytes();
        s.timelapse_budget = m_run->timelapse().budget();
        s.timelapse_snapshots = int(m_run->timelapse().snapshots().size());
        const TimeLapse& tl = m_run->timelapse();
        s.timelapse_weight_bytes = tl.weights_bytes();
        s.timelapse_storage = tl.empty() ? "" : !tl.has_weights() ? "attention only" : tl.weights_bf16() ? "bf16 weights" : "fp32 weights";
        s.tokens_per_s = s.ms_per_step > 0 ? 1e3 * m_cfg.batch_size * m_cfg.block_size / s.ms_per_step : 0;
        publish();  // a NaN/Inf loss: diverged() set the message and paused
    }
    // the headless schedule: every eval_interval and at max_iters (step 0 is evaluated by build)
    if (m_run->evaluation_due()) do_eval();
    if (!m_run->diverged() && step % 100 == 0) keep_good_state();  // after the evaluation: Revert brings it back too
    if (step == m_cfg.max_iters) {
        std::lock_guard lk(m_mutex);
        if (m_pending.running && m_exit_after == 0) {
            m_pending.running = false;
            m_snap.running = false;
            m_snap.message = "reached max iters (" + std::to_string(step) + "): paused; Space trains " + std::to_string(more_steps(m_cfg)) + " steps more";
            m_snap.message_until_start = true;
            publish();
        }
    }
}

}  // namespace attn
