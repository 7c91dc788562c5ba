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

using Clock = std::chrono::steady_clock;
// Auto-sampling: a new sample once training took this many times the last sample (sampling <= 1/20 of the time).
static constexpr double k_sample_ratio = 19.0;

TrainingThread::TrainingThread(Context& ctx, Dataset data, const std::string& corpus_path, const Config& cfg,
                               int exit_after_steps, const FaultInjection& fault, int replicas, bool running)
    : m_ctx(ctx), m_data(std::make_unique<Dataset>(std::move(data))), m_corpus_path(corpus_path),
      m_exit_after(exit_after_steps), m_cfg(cfg), m_fault(fault), m_replicas(replicas) {
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
void TrainingThread::load_checkpoint_from(const std::string& path, bool then_run) {
    if (path.empty()) return no_checkpoint_path("load");
    {
        std::lock_guard lk(m_mutex);
        m_pending.load_path = path;
        if (then_run) set_running_locked(true);  // with the load: one loaded at its max iters stays paused (load_from)
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
    r.name = run_name(s.cfg, s.evals.back().val);
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
    return !finished && (p.step_once > 0 || p.running);
}

void TrainingThread::build(const Config& cfg, bool eval_start, bool preview) {
    {
        std::lock_guard lk(m_mutex);
        m_snap.busy = "building the model (compiling shaders)";
        publish();
    }
    drop_run();
    auto t_build = Clock::now();
    m_run = std::make_unique<Session>(m_ctx, *m_data, cfg, m_replicas);
    m_run->set_fault(m_fault);  // --inject-fault: once, until it fires (a rebuilt model keeps what is left of it)
    m_run->set_events(this);
    m_run->trainer().set_stop_check([this] { return m_quitting.load(); });
    // for a terminal (and the tests): which model trains now, and how long building it took
    std::printf("attnlab: built preset %s, %zu parameters, in %.1f s%s\n", cfg.preset.c_str(), m_run->trainer().num_params(),
                std::chrono::duration<double>(Clock::now() - t_build).count(),
                eval_start ? "; estimating the loss" : "");
    std::string heavy = Trainer::heavy_note(m_ctx, cfg, m_data->vocab_size());  // printed here, shown in the snapshot
    if (!heavy.empty()) std::printf("attnlab: note: %s\n", heavy.c_str());
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
        s.corpus_bytes = m_data->bytes();
        s.vocab = m_data->vocab_size();
        if (!s.vocab_chars || *s.vocab_chars != m_data->vocab())
            s.vocab_chars = std::make_shared<const std::vector<uint32_t>>(m_data->vocab());
        s.params = m_run->trainer().num_params();
        s.done = false;
        s.model_id = ++m_model_id;
        s.diverged = false;
        s.good_step = -1;
        s.keeps_good_state = m_run->can_keep_good_state();
        publish();
    }
    if (preview) show_attention_now();
    if (eval_start) {
        keep_good_state();
        do_eval();  // the lecture prints step 0 too
    }
}

// The map before any step (after a build, a load, a revert): the weights' attention on the next step's batch,
// from a forward pass that changes nothing the step depends on (Trainer::preview_attention).
void TrainingThread::show_attention_now() {
    if (!m_run || m_cfg.kind == ModelKind::Bigram) return;
    if (!m_run->trainer().preview_attention()) return;  // quitting
    m_att_full = m_run->trainer().read_attention();
    m_shown_b = m_run->trainer().display_batch();
    slice_attention();
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

void TrainingThread::drop_run() {
    if (m_run) m_fault = m_run->fault();
    m_run.reset();
}

// Keeps the run's state in memory for Revert, when the model is small enough and the weights are finite.
void TrainingThread::keep_good_state() {
    if (!m_run || !m_run->keep_good_state()) return;
    std::lock_guard lk(m_mutex);
    m_snap.good_step = m_run->good_step();
    publish();
}

// The snapshot's step, step losses and evaluations from the run's history (after a revert or a load).
void TrainingThread::show_history_locked() {
    Snapshot& s = m_snap;
    s.step = m_run->step_count();
    s.step_losses = m_run->history().step_losses;
    s.evals.clear();
    for (auto& e : m_run->history().evals) s.evals.push_back({e.step, e.train, e.val, e.tps});
}

void TrainingThread::do_revert() {
    if (!m_run) throw Error("no good state is kept to revert to");
    m_run->revert_to_good();
    m_weights_changed = true;
    show_attention_now();
    std::lock_guard lk(m_mutex);
    Snapshot& s = m_snap;
    show_history_locked();
    s.diverged = false;
    s.message = "reverted to step " + std::to_string(s.step) + ": paused; lower the learning rate, then Start";
    s.message_until_start = true;
    m_pending.running = false;
    s.running = false;
    publish();
}

void TrainingThread::save_to(const std::string& path) {
    if (!m_run) throw Error("no model to save");
    m_run->save(path);
}

// A checkpoint for the current corpus: a new run with its config, its state and its loss history.
void TrainingThread::load_from(const std::string& path) {
    Checkpoint ck = load_checkpoint(path);
    check_resumable(ck, m_data->vocab(), nullptr);
    try {  // before the running model is dropped for it
        Trainer::check(m_ctx, *m_data, ck.config);
    } catch (const Error& e) {
        throw Error("'" + path + "': " + e.what());
    }
    build(ck.config, false, false);  // the preview comes with the loaded weights
    m_run->resume(ck);
    m_weights_changed = true;
    show_attention_now();  // the loaded weights' (build showed the random ones)
    {
        std::lock_guard lk(m_mutex);
        Snapshot& s = m_snap;
        show_history_locked();
        s.busy.clear();
        if (s.step >= m_cfg.max_iters) {  // a finished run stays paused at its end, as when it got there
            m_pending.running = false;
            s.running = false;
            s.message = "the run is at max iters (" + std::to_string(m_cfg.max_iters) + "): paused; Start trains on past it";
            s.message_until_start = true;
        }
        publish();
    }
    keep_good_state();
}

void TrainingThread::do_eval() {
    {
        std::lock_guard lk(m_mutex);
        m_snap.busy = "estimating the loss";
        publish();
    }
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
    m_snap.busy.clear();
    publish();
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
    std::lock_guard lk(m_mutex);
    Snapshot& s = m_snap;
    s.samples.push_back({step, s.evals.empty() ? 0.0 : s.evals.back().val, prompt, std::move(sample.text),
                         std::move(sample.left_out)});
    if (s.samples.size() > 200) s.samples.erase(s.samples.begin());
    s.sample_ms = ms;
    s.sample_s += ms * 1e-3;
    s.wall_s = active_s(Clock::now());
    s.sample_every_steps = s.ms_per_step > 0 ? std::max(1, int(k_sample_ratio * ms / s.ms_per_step + 0.5)) : 0;
    publish();
}

void TrainingThread::slice_attention() {
    int T = m_cfg.block_size;
    size_t per = size_t(T) * T;
    int layer = std::clamp(m_att_layer, 0, std::max(0, m_cfg.n_layer - 1));
    int head = std::clamp(m_att_head, 0, std::max(0, m_cfg.n_head - 1));
    size_t at = (size_t(layer) * m_cfg.n_head + head) * per;
    std::vector<float> att;
    if (m_att_full.size() >= at + per) att.assign(m_att_full.begin() + at, m_att_full.begin() + at + per);
    // all heads: every (T,T) map averaged over blocks of f x f, at most 32 x 32 cells each
    std::vector<float> all;
    int L = m_cfg.n_layer, NH = m_cfg.n_head, f = (T + 31) / 32, G = (T + f - 1) / f;
    if (m_att_all && m_att_full.size() >= size_t(L) * NH * per) {
        all.assign(size_t(L) * NH * G * G, 0.0f);
        std::vector<int> cnt(size_t(G) * G, 0);
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) cnt[size_t(i / f) * G + j / f]++;
        for (int m = 0; m < L * NH; m++) {
            const float* src = m_att_full.data() + size_t(m) * per;
            float* dst = all.data() + size_t(m) * G * G;
            for (int i = 0; i < T; i++) {
                float* row = dst + size_t(i / f) * G;
                for (int j = 0; j < T; j++) row[j / f] += src[size_t(i) * T + j];
            }
            for (size_t k = 0; k < size_t(G) * G; k++) dst[k] /= float(cnt[k]);
        }
    }
    int b = m_shown_b;
    std::vector<uint32_t> toks = m_run->trainer().last_batch_tokens(b);
    std::vector<std::string> chars;
    for (uint32_t t : toks) chars.push_back(m_data->decode(t));
    std::lock_guard lk(m_mutex);
    m_snap.attention = std::move(att);
    m_snap.att_tokens = std::move(toks);
    m_snap.att_chars = std::move(chars);
    m_snap.att_T = T;
    m_snap.att_element = b;
    m_snap.att_layer = layer;
    m_snap.att_head = head;
    m_snap.att_all = std::move(all);
    m_snap.att_grid = m_snap.att_all.empty() ? 0 : G;
    m_snap.att_layers = L;
    m_snap.att_heads = NH;
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
            m_snap.message = "reached max iters (" + std::to_string(step) + "): paused; Start continues";
            m_snap.message_until_start = true;
            publish();
        }
    }
}

// Saves to the autosave file when it is on, the run moved on since the last one and is not diverged; `now`: at quit.
void TrainingThread::autosave(const Pending& p, bool now) {
    if (p.autosave_min <= 0 || p.autosave_path.empty() || !m_run || m_snap.fatal || m_run->diverged()) return;
    if (m_run->trainer().step_count() == 0 || m_run->trainer().step_count() == m_autosaved_step) return;
    auto t = Clock::now();
    if (m_last_autosave == Clock::time_point{}) m_last_autosave = t;
    if (!now && t - m_last_autosave < std::chrono::duration<double, std::ratio<60>>(p.autosave_min)) return;
    m_last_autosave = t;
    std::string msg;
    bool err = false;
    try {
        save_to(p.autosave_path);
        m_autosaved_step = m_run->trainer().step_count();
        msg = "autosaved step " + std::to_string(m_autosaved_step) + " to " + p.autosave_path;
    } catch (const DeviceError& e) {  // the GPU is gone (the window's drawing may have met it first): the last good
        msg = std::string("autosave failed: ") + e.what() + rescue(p.autosave_path);  // state kept in memory, if any
        err = true;
    } catch (const std::exception& e) {
        msg = std::string("autosave failed: ") + e.what();
        err = true;
    }
    std::lock_guard lk(m_mutex);
    m_snap.ckpt_message = msg;
    m_snap.ckpt_error = err;
    publish();
}

// After a device failure nothing on the device can be trusted or even read: the last good state, kept in host memory,
// goes to the autosave file instead (unless an autosave of a later step is there already), for the next start to
// offer. Returns what to add to the failure's message.
std::string TrainingThread::rescue(const std::string& path) {
    std::string note, ckpt;
    bool err = false;
    if (path.empty()) return "";
    bool good = m_run && m_run->has_good_state();
    int good_step = good ? m_run->good_step() : -1;
    if (m_autosaved_step >= 0 && (!good || m_autosaved_step >= good_step)) {
        note = "; the autosave of step " + std::to_string(m_autosaved_step) + " in " + path +
               " is safe: restart attnlab to resume it";
    } else if (!good) {
        note = "; no good state of this model is kept in memory, so nothing could be saved";
    } else {
        try {
            m_run->save_good_state(path);
            m_autosaved_step = good_step;
            ckpt = "saved the last good state (step " + std::to_string(good_step) + ") to " + path;
            note = "; the last good state (step " + std::to_string(good_step) + ") was saved to " + path +
                   ": restart attnlab to resume it";
        } catch (const std::exception& e) {
            ckpt = note = std::string("saving the last good state failed: ") + e.what();
            note = "; " + note;
            err = true;
        }
    }
    if (!ckpt.empty()) {
        std::lock_guard lk(m_mutex);
        m_snap.ckpt_message = ckpt;
        m_snap.ckpt_error = err;
        publish();
    }
    return note;
}

void TrainingThread::run() {
    auto fail = [&](const std::exception& e, bool fatal) {
        std::lock_guard lk(m_mutex);
        m_snap.message = e.what();
        m_snap.busy.clear();
        m_snap.fatal = m_snap.fatal || fatal;
        if (fatal || !m_run) {
            m_pending.running = false;
            m_snap.running = false;
            m_snap.has_model = m_run != nullptr;
        }
        publish();
    };
    try {
        build(m_cfg);
    } catch (const DeviceError& e) {
        fail(e, true);
    } catch (const std::exception& e) {
        fail(e, false);
    }
    auto window_start = Clock::now();
    int window_steps = 0;
    for (;;) {
        Pending p;
        {
            std::unique_lock lk(m_mutex);
            auto wait_from = Clock::now();
            m_cv.wait_for(lk, std::chrono::milliseconds(200), [&] { return has_work(); });
            m_idle += Clock::now() - wait_from;  // paused: not in the Performance panel's wall time
            p = m_pending;
            if (m_pending.quit) {
                lk.unlock();
                autosave(p, true);
                return;
            }
            m_pending.reset = m_pending.restart = m_pending.live = m_pending.sample = m_pending.reslice = false;
            m_pending.causal = -1;
            m_pending.save_path.clear();
            m_pending.load_path.clear();
            m_pending.revert = false;
            if (m_pending.step_once > 0) m_pending.step_once--;
            m_pending.profiling_changed = false;
            m_att_all = m_pending.att_all;
            m_att_period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / p.frame_rate));
            m_snap.running = m_pending.running;
        }
        try {
            if (p.restart) {
                // Check everything before dropping the old model, so a bad path or size keeps training going.
                auto errs = validate(p.restart_cfg);
                if (!errs.empty()) throw Error(errs.front().message);
                auto data = std::make_unique<Dataset>(Dataset::from_file(p.restart_path));
                Trainer::check(m_ctx, *data, p.restart_cfg);  // the block size, the GPU's memory
                drop_run();
                m_data = std::move(data);
                m_corpus_path = p.restart_path;
                {
                    std::lock_guard lk(m_mutex);
                    m_snap.restart_error.clear();
                    m_snap.message = "restarted: " + p.restart_cfg.preset + " on " + m_data->name();
                }
                build(p.restart_cfg);
            } else if (p.reset && !m_snap.fatal) {
                build(m_cfg);
            }
            // A save or a load: its outcome, or "<what> failed: ...", goes to the checkpoint line; device errors
            // are not the file's fault and go on to the handler below.
            auto checkpoint_op = [&](const char* what, bool clear_busy, const std::function<std::string()>& op) {
                std::string msg;
                bool err = false;
                try {
                    msg = op();
                } catch (const DeviceError&) {
                    throw;
                } catch (const std::exception& e) {
                    msg = std::string(what) + " failed: " + e.what();
                    err = true;
                }
                std::lock_guard lk(m_mutex);
                m_snap.ckpt_message = msg;
                m_snap.ckpt_error = err;
                if (clear_busy) m_snap.busy.clear();
                publish();
            };
            if (!p.save_path.empty())
                checkpoint_op("save", false, [&] {
                    save_to(p.save_path);
                    return "saved step " + std::to_string(m_run->trainer().step_count()) + " to " + p.save_path;
                });
            if (!p.load_path.empty() && !m_snap.fatal)
                checkpoint_op("load", true, [&] {
                    load_from(p.load_path);
                    if (m_run->trainer().step_count() >= m_cfg.max_iters) p.running = false;  // paused there: no step now
                    return "loaded " + p.load_path + " at step " + std::to_string(m_run->trainer().step_count());
                });
            if (p.revert && m_run) {
                try {
                    do_revert();
                } catch (const DeviceError&) {
                    throw;
                } catch (const std::exception& e) {
                    std::lock_guard lk(m_mutex);
                    m_snap.message = std::string("revert failed: ") + e.what();
                    publish();
                }
            }
            // A change the trainer takes between steps; what it kept is shown. One it refuses (a batch too large
            // for a CPU driver's loops, Trainer::check_cpu_loops) leaves training as it was, with the reason shown.
            auto apply_live = [&](const Config& c) {
                std::string refused;
                try {
                    m_run->trainer().set_live(c);
                } catch (const DeviceError&) {
                    throw;
                } catch (const std::exception& e) {
                    refused = std::string("not applied: ") + e.what();
                }
                bool mask_changed = m_cfg.causal != m_run->trainer().config().causal;
                m_cfg = m_run->trainer().config();
                {
                    std::lock_guard lk(m_mutex);
                    m_snap.cfg = m_cfg;
                    if (!refused.empty()) m_snap.message = refused;
                    publish();
                }
                if (mask_changed && !p.running) show_attention_now();  // paused: the map under the new mask now
            };
            if (p.causal >= 0 && m_run) {  // set_causal
                Config c = m_run->trainer().config();
                c.causal = p.causal == 1;
                apply_live(c);
            }
            if (p.live && m_run) {
                Config c = m_cfg;
                c.lr = p.live_cfg.lr; c.weight_decay = p.live_cfg.weight_decay; c.batch_size = p.live_cfg.batch_size;
                c.eval_interval = p.live_cfg.eval_interval; c.eval_iters = p.live_cfg.eval_iters;
                c.temperature = p.live_cfg.temperature; c.top_k = p.live_cfg.top_k; c.sample_chars = p.live_cfg.sample_chars;
                c.max_iters = p.live_cfg.max_iters;
                c.causal = p.live_cfg.causal; c.dropout = p.live_cfg.dropout;
                int old_max = m_cfg.max_iters;
                apply_live(c);
                // max iters lowered to the step reached or below: paused now, as when a run gets there
                if (m_cfg.max_iters != old_max && m_run->trainer().step_count() >= m_cfg.max_iters) {
                    p.running = false;
                    std::lock_guard lk(m_mutex);
                    if (m_pending.running) {
                        m_pending.running = m_snap.running = false;
                        m_snap.message = "at max iters (" + std::to_string(m_cfg.max_iters) + ") already: paused; Start "
                                         "trains on past it";
                        m_snap.message_until_start = true;
                        publish();
                    }
                }
            }
            if (p.profiling_changed && m_run) {
                m_run->trainer().set_profiling(p.profiling);
                m_kernel_hist.clear();
                m_kernel_next = 0;
                std::lock_guard lk(m_mutex);
                m_snap.profiling = p.profiling;
                m_snap.kernel_times.clear();
                m_snap.kernel_steps = 0;
                publish();
            }
            if (p.reslice && m_run) {
                m_att_element = std::clamp(p.att_element, 0, m_cfg.batch_size - 1);
                m_att_layer = p.att_layer;
                m_att_head = p.att_head;
                if (m_att_element != m_run->trainer().display_batch()) {
                    m_run->trainer().set_display_batch(m_att_element);
                    // paused: the element now, on the next step's batch; training: from the next step
                    if (!p.running) show_attention_now();
                }
                slice_attention();  // layer/head now
            }
            bool finished = m_run && m_exit_after > 0 && m_run->trainer().step_count() >= m_exit_after;
            if (m_run && !m_snap.fatal && !finished && (p.step_once > 0 || p.running)) {
                do_step(!p.running);
                window_steps++;
                finished = m_exit_after > 0 && m_run->trainer().step_count() >= m_exit_after;
                if (finished) {
                    if (m_snap.evals.empty() || m_snap.evals.back().step != m_run->trainer().step_count()) do_eval();
                    do_sample();
                    std::lock_guard lk(m_mutex);
                    m_snap.done = true;
                    publish();
                }
            }
            autosave(p, false);
            double window_s = std::chrono::duration<double>(Clock::now() - window_start).count();
            if (window_s >= 1.0) {
                std::lock_guard lk(m_mutex);
                m_snap.it_per_s = window_steps / window_s;
                window_steps = 0;
                window_start = Clock::now();
                publish();
            }
            // Sampling costs at most a twentieth of the time: sample again once training took 19x the last sample (a
            // lecture model's samples refresh about twice a second; sampling runs on one device, the other replicas
            // idle meanwhile: a tenth cost the window 7-10% of its training throughput, bench/RESULTS.md).
            bool auto_sample = m_weights_changed && m_train_s_since_sample * 1e3 >= k_sample_ratio * m_snap.sample_ms;
            if (m_run && !m_snap.fatal && m_cfg.sample_chars > 0 && (p.sample || auto_sample)) do_sample();
        } catch (const DeviceError& e) {
            fail(Error(e.what() + rescue(p.autosave_path)), true);
        } catch (const std::exception& e) {
            if (p.restart) {
                std::lock_guard lk(m_mutex);
                m_snap.restart_error = e.what();
                m_snap.busy.clear();
                publish();
                if (m_run) continue;
            }
            fail(e, false);
        }
    }
}

}  // namespace attn
