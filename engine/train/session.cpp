// Session: the run around the Trainer (schedule, evaluations, history, checkpoints, the good state, metrics, faults).
#include "train/session.h"

#include <chrono>
#include <cmath>
#include <limits>

namespace attn {

bool inject_fault(Trainer& tr, FaultInjection& f) {
    if (f.kind == FaultInjection::Kind::None || tr.step_count() + 1 != f.step) return false;
    FaultInjection::Kind kind = f.kind;
    f.kind = FaultInjection::Kind::None;  // once: a reverted or resumed run passes this step again
    std::string what = "vkQueueSubmit (--inject-fault " + f.text + ")";
    if (kind == FaultInjection::Kind::OutOfMemory) vk_fail(VK_ERROR_OUT_OF_DEVICE_MEMORY, what.c_str(), __FILE__, __LINE__);
    if (kind == FaultInjection::Kind::DeviceLost) vk_fail(VK_ERROR_DEVICE_LOST, what.c_str(), __FILE__, __LINE__);
    // nan: a whole tensor, so every batch meets it (one entry of the embedding table could be missed by a batch)
    TrainerState st = tr.export_state();
    const ParamInfo& first = tr.model().params_info().front();
    std::fill_n(st.params.begin() + first.offset, first.count, std::numeric_limits<float>::quiet_NaN());
    tr.import_state(st);
    return true;
}

Session::Session(Context& ctx, const Dataset& data, const Config& cfg, int replicas)
    : m_ctx(ctx), m_data(data), m_trainer(std::make_unique<Trainer>(ctx, data, cfg, replicas)) {}

void Session::resume(const Checkpoint& ck) {
    m_trainer->import_state(ck.state);
    m_history = ck.history;
    m_diverged = false;
}

bool Session::evaluation_due() const {
    int step = step_count();
    const Config& c = config();
    return (step % c.eval_interval == 0 || step == c.max_iters) && !evaluated_at_current_step();
}

SessionStep Session::step() {
    inject_fault(*m_trainer, m_fault);  // --inject-fault (tests): nothing unless this is its step
    using clock = std::chrono::steady_clock;
    auto t0 = clock::now();
    SessionStep s;
    try {
        s.result = m_trainer->step();
    } catch (const DeviceError& e) {
        if (m_events) m_events->device_failed(e.what());
        throw;
    }
    s.seconds = std::chrono::duration<double>(clock::now() - t0).count();
    m_train_s_since_eval += s.seconds;
    m_tokens_since_eval += long(config().batch_size) * config().block_size;
    m_steps_since_eval++;
    m_history.step_losses.push_back(s.result.loss);
    if (!s.result.finite) {
        m_diverged = true;
        if (m_events) m_events->diverged(step_count(), config().lr);
    }
    return s;
}

SessionEval Session::evaluate(const std::function<void(int, int)>& progress) {
    EvalResult e = m_trainer->estimate_loss(progress);  // Interrupted: nothing below happens
    SessionEval out;
    if (m_tokens_since_eval > 0 && m_train_s_since_eval > 0) m_last_tps = m_tokens_since_eval / m_train_s_since_eval;
    out.ms_per_step = ms_per_step_since_eval();
    m_tokens_since_eval = 0;
    m_steps_since_eval = 0;
    m_train_s_since_eval = 0;
    out.eval = {step_count(), e.train, e.val, m_last_tps};
    m_history.evals.push_back(out.eval);
    if (m_metrics.is_open())
        m_metrics << out.eval.step << ',' << out.eval.train << ',' << out.eval.val << ',' << out.eval.tps << '\n'
                  << std::flush;
    if (m_events) m_events->evaluated(out);
    return out;
}

SessionSample Session::sample(const std::string& prompt, int n_chars, uint64_t seed) {
    using clock = std::chrono::steady_clock;
    auto t0 = clock::now();
    const Config& c = config();
    SessionSample out;
    out.step = step_count();
    out.prompt = prompt;
    out.text = m_trainer->generate(prompt, n_chars, c.temperature, c.top_k, seed);
    out.left_out = m_data.unknown_chars(prompt);
    out.seconds = std::chrono::duration<double>(clock::now() - t0).count();
    if (m_events) m_events->sampled(out);
    return out;
}

Checkpoint Session::checkpoint() {
    return {m_trainer->config(), m_data.vocab(), m_data.name(), m_trainer->export_state(), m_history};
}

void Session::save(const std::string& path) {
    save_checkpoint(path, checkpoint(), m_trainer->model().params_info());
    m_saved_step = step_count();
    m_saved_path = path;
    if (m_events) m_events->checkpoint_written(path, m_saved_step);
}

void Session::write_metrics_to(const std::string& path) {
    m_metrics.close();
    m_metrics.open(path);
    if (!m_metrics) throw Error("cannot write --metrics file '" + path + "': check the folder exists and is writable");
    m_metrics << "step,train_loss,val_loss,tokens_per_s\n";
    // the run's earlier evaluations first (a resumed run's, from its checkpoint, with the speed measured then; empty
    // where a checkpoint did not keep it), so the file holds the whole run
    for (const auto& e : m_history.evals) {
        m_metrics << e.step << ',' << e.train << ',' << e.val << ',';
        if (e.tps >= 0) m_metrics << e.tps;
        m_metrics << '\n';
    }
    m_metrics.flush();
}

bool Session::keep_good_state() {
    if (!can_keep_good_state()) return false;
    TrainerState st = m_trainer->export_state();
    for (float v : st.params)
        if (!std::isfinite(v)) return false;
    m_good = {m_trainer->config(), m_data.vocab(), m_data.name(), std::move(st), m_history};
    m_has_good = true;
    return true;
}

void Session::revert_to_good() {
    if (!m_has_good) throw Error("no good state is kept to revert to");
    m_trainer->import_state(m_good.state);
    m_history = m_good.history;
    m_diverged = false;
}

void Session::save_good_state(const std::string& path) {
    if (!m_has_good) throw Error("no good state is kept");
    save_checkpoint(path, m_good, m_trainer->model().params_info());
}

}  // namespace attn
