// The training thread: steps, evaluates and samples beside the UI; all UI-visible state goes through Snapshot.
#include "training_thread.h"

#include <algorithm>
#include <chrono>

namespace attn {

using Clock = std::chrono::steady_clock;

TrainingThread::TrainingThread(Context& ctx, Dataset data, const std::string& corpus_path, const Config& cfg,
                               int exit_after_steps)
    : m_ctx(ctx), m_data(std::make_unique<Dataset>(std::move(data))), m_corpus_path(corpus_path),
      m_exit_after(exit_after_steps), m_cfg(cfg) {
    m_snap.cfg = cfg;
    m_snap.corpus_path = corpus_path;
    m_snap.version = 1;  // a fresh Snapshot (version 0) always takes this first copy
    m_pending.running = true;
    m_thread = std::thread([this] { run(); });
}

TrainingThread::~TrainingThread() {
    {
        std::lock_guard lk(m_mutex);
        m_pending.quit = true;
    }
    m_cv.notify_all();
    if (m_thread.joinable()) m_thread.join();
}

void TrainingThread::set_running(bool on) {
    std::lock_guard lk(m_mutex);
    m_pending.running = on;
    m_snap.running = on;
    publish();
    m_cv.notify_all();
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
void TrainingThread::set_live(const Config& cfg) {
    post([&](Pending& p) {
        p.live = true;
        p.live_cfg = cfg;
    });
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

bool TrainingThread::poll(Snapshot& out) {
    std::lock_guard lk(m_mutex);
    if (out.version == m_snap.version) return false;
    out = m_snap;
    return true;
}

void TrainingThread::publish() { m_snap.version++; }

bool TrainingThread::has_work() const {
    const Pending& p = m_pending;
    if (p.quit || p.reset || p.restart || p.live || p.sample || p.reslice) return true;
    if (!m_trainer || m_snap.fatal) return false;
    bool finished = m_exit_after > 0 && m_trainer->step_count() >= m_exit_after;
    return !finished && (p.step_once > 0 || p.running);
}

void TrainingThread::build(const Config& cfg) {
    {
        std::lock_guard lk(m_mutex);
        m_snap.busy = "building the model (compiling shaders)";
        publish();
    }
    m_trainer.reset();
    m_trainer = std::make_unique<Trainer>(m_ctx, *m_data, cfg);
    m_cfg = cfg;
    m_att_full.clear();
    m_trainer->set_display_batch(std::clamp(m_att_element, 0, cfg.batch_size - 1));
    m_shown_b = m_trainer->display_batch();
    m_train_s_since_sample = 0;
    m_weights_changed = true;
    {
        std::lock_guard lk(m_mutex);
        Snapshot& s = m_snap;
        s.step = 0;
        s.has_model = true;
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
        s.params = m_trainer->num_params();
        s.done = false;
        publish();
    }
    do_eval();  // the lecture prints step 0 too
}

void TrainingThread::do_eval() {
    {
        std::lock_guard lk(m_mutex);
        m_snap.busy = "estimating the loss";
        publish();
    }
    EvalResult e = m_trainer->estimate_loss();
    std::lock_guard lk(m_mutex);
    m_snap.evals.push_back({m_trainer->step_count(), e.train, e.val});
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
    int step = m_trainer->step_count();
    std::string text = m_trainer->generate(prompt, m_cfg.sample_chars, m_cfg.temperature, m_cfg.top_k, m_cfg.seed + step);
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    m_train_s_since_sample = 0;
    m_weights_changed = false;
    std::lock_guard lk(m_mutex);
    Snapshot& s = m_snap;
    s.samples.push_back({step, s.evals.empty() ? 0.0 : s.evals.back().val, prompt, std::move(text)});
    if (s.samples.size() > 200) s.samples.erase(s.samples.begin());
    s.sample_ms = ms;
    s.sample_every_steps = s.ms_per_step > 0 ? std::max(1, int(3.0 * ms / s.ms_per_step + 0.5)) : 0;
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
    int b = m_shown_b;
    std::vector<uint32_t> toks = m_trainer->last_batch_tokens(b);
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
    publish();
}

void TrainingThread::do_step(bool force_attention) {
    int b = m_trainer->display_batch();
    auto t0 = Clock::now();
    StepResult r = m_trainer->step();
    auto t1 = Clock::now();
    double s_step = std::chrono::duration<double>(t1 - t0).count();
    m_train_s_since_sample += s_step;
    m_weights_changed = true;
    int step = m_trainer->step_count();
    // Every step while steps are slower than the screen; otherwise ~60 times a second is all anyone can see.
    bool read = force_attention || t1 - m_last_att_read >= std::chrono::milliseconds(16) ||
                (m_exit_after > 0 && step >= m_exit_after);
    if (read) {
        m_last_att_read = t1;
        m_shown_b = b;
        if (m_cfg.kind != ModelKind::Bigram) m_att_full = m_trainer->read_attention();
        slice_attention();
    }
    {
        std::lock_guard lk(m_mutex);
        Snapshot& s = m_snap;
        s.step = step;
        s.step_losses.push_back(r.loss);
        double ms = s_step * 1e3;
        s.ms_per_step = s.ms_per_step > 0 ? 0.9 * s.ms_per_step + 0.1 * ms : ms;
        s.gpu_ms = r.gpu_ms;
        s.tokens_per_s = s.ms_per_step > 0 ? 1e3 * m_cfg.batch_size * m_cfg.block_size / s.ms_per_step : 0;
        if (!r.finite) {
            s.message = "training diverged at step " + std::to_string(step) +
                        " (the loss is NaN or Inf): lower the learning rate and press Reset";
            m_pending.running = false;
            s.running = false;
        }
        publish();
    }
    if (step % m_cfg.eval_interval == 0) do_eval();
    if (step == m_cfg.max_iters) {
        std::lock_guard lk(m_mutex);
        if (m_pending.running && m_exit_after == 0) {
            m_pending.running = false;
            m_snap.running = false;
            m_snap.message = "reached max iters (" + std::to_string(step) + "): paused; Start continues";
            publish();
        }
    }
}

void TrainingThread::run() {
    auto fail = [&](const std::exception& e, bool fatal) {
        std::lock_guard lk(m_mutex);
        m_snap.message = e.what();
        m_snap.busy.clear();
        m_snap.fatal = m_snap.fatal || fatal;
        if (fatal || !m_trainer) {
            m_pending.running = false;
            m_snap.running = false;
            m_snap.has_model = m_trainer != nullptr;
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
            m_cv.wait_for(lk, std::chrono::milliseconds(200), [&] { return has_work(); });
            if (m_pending.quit) return;
            p = m_pending;
            m_pending.reset = m_pending.restart = m_pending.live = m_pending.sample = m_pending.reslice = false;
            if (m_pending.step_once > 0) m_pending.step_once--;
            m_snap.running = m_pending.running;
        }
        try {
            if (p.restart) {
                // Check everything before dropping the old model, so a bad path or size keeps training going.
                auto errs = validate(p.restart_cfg);
                if (!errs.empty()) throw Error(errs.front().message);
                auto data = std::make_unique<Dataset>(Dataset::from_file(p.restart_path));
                data->check_block_size(p.restart_cfg.block_size);
                m_trainer.reset();
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
            if (p.live && m_trainer) {
                Config c = m_cfg;
                c.lr = p.live_cfg.lr; c.weight_decay = p.live_cfg.weight_decay; c.batch_size = p.live_cfg.batch_size;
                c.eval_interval = p.live_cfg.eval_interval; c.eval_iters = p.live_cfg.eval_iters;
                c.temperature = p.live_cfg.temperature; c.top_k = p.live_cfg.top_k; c.sample_chars = p.live_cfg.sample_chars;
                c.max_iters = p.live_cfg.max_iters;
                m_trainer->set_live(c);
                m_cfg = m_trainer->config();
                std::lock_guard lk(m_mutex);
                m_snap.cfg = m_cfg;
                publish();
            }
            if (p.reslice && m_trainer) {
                m_att_element = std::clamp(p.att_element, 0, m_cfg.batch_size - 1);
                m_att_layer = p.att_layer;
                m_att_head = p.att_head;
                if (m_att_element != m_trainer->display_batch()) m_trainer->set_display_batch(m_att_element);
                slice_attention();  // layer/head now; a new batch element shows from the next step
            }
            bool finished = m_trainer && m_exit_after > 0 && m_trainer->step_count() >= m_exit_after;
            if (m_trainer && !m_snap.fatal && !finished && (p.step_once > 0 || p.running)) {
                do_step(!p.running);
                window_steps++;
                finished = m_exit_after > 0 && m_trainer->step_count() >= m_exit_after;
                if (finished) {
                    if (m_snap.evals.empty() || m_snap.evals.back().step != m_trainer->step_count()) do_eval();
                    do_sample();
                    std::lock_guard lk(m_mutex);
                    m_snap.done = true;
                    publish();
                }
            }
            double window_s = std::chrono::duration<double>(Clock::now() - window_start).count();
            if (window_s >= 1.0) {
                std::lock_guard lk(m_mutex);
                m_snap.it_per_s = window_steps / window_s;
                window_steps = 0;
                window_start = Clock::now();
                publish();
            }
            // Sampling costs at most a quarter of the time: sample again once training took 3x the last sample.
            bool auto_sample = m_weights_changed && m_train_s_since_sample * 1e3 >= 3.0 * m_snap.sample_ms;
            if (m_trainer && !m_snap.fatal && m_cfg.sample_chars > 0 && (p.sample || auto_sample)) do_sample();
        } catch (const DeviceError& e) {
            fail(e, true);
        } catch (const std::exception& e) {
            if (p.restart) {
                std::lock_guard lk(m_mutex);
                m_snap.restart_error = e.what();
                m_snap.busy.clear();
                publish();
                if (m_trainer) continue;
            }
            fail(e, false);
        }
    }
}

}  // namespace attn
