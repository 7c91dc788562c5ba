// Session: the run around the Trainer (schedule, evaluations, history, checkpoints, the good state, metrics, faults).
#include "train/session.h"

#include "train/dataset.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <fcntl.h>
#include <filesystem>
#include <limits>
#include <sstream>
#include <unistd.h>

#include "io/files.h"

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

Session::Session(Context& ctx, const Dataset& data, const Config& cfg, int replicas, const Checkpoint* from)
    : m_ctx(ctx), m_data(data),
      m_trainer(std::make_unique<Trainer>(ctx, data, cfg, replicas, from ? &from->state : nullptr)) {
    forget_files("the corpus");  // one run at a time: its text is what no writer may touch
    register_file("the corpus", data.name());
    set_probe(default_probe(data, cfg.block_size));
    m_timelapse.plan(m_trainer->model().flat_size(), timelapse_expected(cfg.max_iters, cfg.eval_interval));
    if (from) m_resume_note = adopt(*from);
}

std::string Session::adopt(const Checkpoint& ck) {
    m_history = ck.history;
    m_diverged = false;
    update_metrics();
    if (ck.timelapse.empty()) {  // saved before time-lapses, or imported (a nanoGPT ckpt.pt): its own weights
        m_timelapse.clear();
        m_head_scores.clear();
        m_loss_by_position.clear();
        if (m_recording) record_probe();
        return "the checkpoint holds no attention time-lapse (saved before they were recorded, or imported): it holds "
               "one step, the checkpoint's own weights at step " + std::to_string(step_count()) + ", and records on";
    }
    size_t budget = std::max(m_timelapse.budget(), ck.timelapse.bytes());
    m_timelapse = ck.timelapse;
    m_head_scores.clear();
    m_loss_by_position.clear();
    m_timelapse.set_budget(budget);
    return "";
}

std::string Session::default_probe(const Dataset& data, int block_size) {
    const auto& toks = data.tokens();
    size_t from = data.n_train(), n_val = data.n_val();
    std::string val = data.decode(std::vector<uint32_t>(toks.begin() + long(from),
                                                        toks.begin() + long(from + std::min<size_t>(n_val, 1 << 16))));
    std::vector<uint32_t> cps;
    decode_utf8(val, cps, nullptr);
    const size_t T = size_t(std::max(1, block_size));
    // the split starts mid-line: begin after its first newline (when there is one)
    size_t start = 0;
    for (size_t i = 0; i < cps.size(); i++)
        if (cps[i] == '\n') {
            start = i + 1;
            break;
        }
    if (start >= cps.size()) start = 0;
    auto text = [&](size_t a, size_t b) {
        std::string out;
        for (size_t i = a; i < b; i++) out += encode_utf8(cps[i]);
        return out;
    };
    // a whole line of at most T characters and at least half of that (or 4), among the first hundred
    size_t at = start;
    for (int line = 0; line < 100 && at < cps.size(); line++) {
        size_t end = at;
        while (end < cps.size() && cps[end] != '\n') end++;
        size_t len = end - at;
        if (len <= T && len >= std::min<size_t>(T, std::max<size_t>(4, T / 2))) return text(at, end);
        at = end + 1;
    }
    // else a run of whole lines that fits (a long block), from the first line that is not empty
    while (start < cps.size() && cps[start] == '\n') start++;
    size_t best = start;
    for (size_t from = start; from < cps.size();) {
        size_t e = from;
        while (e < cps.size() && cps[e] != '\n') e++;
        if (e - start > T) break;
        best = e;
        from = e + 1;
    }
    if (best > start) return text(start, best);
    // else the first line's whole words that fit (a block shorter than a word: that word's first T characters)
    size_t end = start, last_break = start;
    while (end < cps.size() && end - start < T && cps[end] != '\n') {
        if (cps[end] == ' ') last_break = end;
        end++;
    }
    bool cut_mid_word = end < cps.size() && end - start == T && cps[end] != ' ' && cps[end] != '\n';
    if (cut_mid_word && last_break > start) end = last_break;
    if (end == start) end = std::min(cps.size(), start + T);
    return text(start, end);
}

std::vector<uint32_t> Session::probe_tokens(const Dataset& data, const std::string& text, int block_size,
                                            std::string* note, std::string* kept) {
    std::vector<uint32_t> cps;
    if (text.empty()) throw Error("the probe is empty: type some text");
    if (data.bpe()) {  // BPE: every byte has a token; the last block_size tokens are kept
        std::vector<uint32_t> ids = data.encode(text);
        size_t T = size_t(block_size);
        std::string said;
        if (ids.size() > T) {
            ids.erase(ids.begin(), ids.end() - long(T));
            said = "the probe is longer than the block size (" + std::to_string(T) + " tokens): its last " +
                   std::to_string(T) + " tokens are used";
        }
        if (note) *note = said;
        if (kept) *kept = data.decode(ids);
        return ids;
    }
    if (!decode_utf8(text, cps, nullptr)) throw Error("the probe is not valid UTF-8 text: type it again");
    // a character the corpus lacks keeps its place as a stand-in (timelapse.h, probe_chars)
    const auto& vocab = data.vocab();
    auto space = std::lower_bound(vocab.begin(), vocab.end(), uint32_t(' '));
    uint32_t stand_in = space != vocab.end() && *space == ' ' ? uint32_t(space - vocab.begin()) : 0;
    std::vector<uint32_t> tokens;
    bool any_known = false;
    for (uint32_t c : cps) {
        auto it = std::lower_bound(vocab.begin(), vocab.end(), c);
        bool known = it != vocab.end() && *it == c;
        any_known |= known;
        tokens.push_back(known ? uint32_t(it - vocab.begin()) : stand_in);
    }
    std::string said, unknown = data.unknown_chars(text);
    if (!any_known)
        throw Error("the probe has no character of the corpus" + (unknown.empty() ? "" : " (" + unknown + ")") +
                    ": type text made of the corpus's characters");
    size_t T = size_t(block_size);
    if (tokens.size() > T) {
        tokens.erase(tokens.begin(), tokens.end() - long(T));
        cps.erase(cps.begin(), cps.end() - long(T));
        said = "the probe is longer than the block size (" + std::to_string(T) + "): its last " + std::to_string(T) +
               " characters are used";
        unknown = data.unknown_chars([&] {
            std::string k;
            for (uint32_t c : cps) k += encode_utf8(c);
            return k;
        }());
    }
    if (!unknown.empty())
        said += std::string(said.empty() ? "" : "; ") + "not in the corpus, marked in place and given no loss: " + unknown;
    if (note) *note = said;
    if (kept) {
        kept->clear();
        for (uint32_t c : cps) *kept += encode_utf8(c);
    }
    return tokens;
}

ProbeSnapshot Session::probe_now(const std::vector<uint32_t>& tokens, const std::string& text) {
    ProbeSnapshot s = m_trainer->probe(tokens);
    mask_unknown(s, probe_unknown(tokens, text, m_data.vocab()));
    return s;
}

std::string Session::set_probe(const std::string& text, const std::function<void(int, int)>& progress) {
    std::string note, kept;
    std::vector<uint32_t> tokens = probe_tokens(m_data, text, config().block_size, &note, &kept);
    if (tokens == m_timelapse.tokens() && kept == m_timelapse.text()) return note;
    if (!m_timelapse.has_weights()) {  // nothing recorded yet, or a history of attention only (an older checkpoint)
        if (!m_timelapse.empty())
            note += std::string(note.empty() ? "" : "; ") + "the time-lapse was saved without its weights (an older "
                    "checkpoint), so this probe cannot be replayed at its steps: its history starts now";
        m_timelapse.reset(tokens, kept, m_trainer->model().n_layer(), m_trainer->model().n_head());
        m_head_scores.clear();
        return note;
    }
    // every recorded step's view of the new probe, computed from that step's weights
    std::vector<ProbeSnapshot> views;
    views.reserve(m_timelapse.snapshots().size());
    with_recorded_weights([&](size_t i) {
        if (progress) progress(int(i), int(m_timelapse.snapshots().size()));
        views.push_back(probe_now(tokens, kept));
    });
    m_timelapse.set_views(tokens, kept, std::move(views));
    m_head_scores.clear();
    return note;
}

void Session::with_recorded_weights(const std::function<void(size_t)>& each, size_t only) {
    std::vector<float> live = m_trainer->read_params();
    try {
        for (size_t i = 0; i < m_timelapse.snapshots().size(); i++) {
            if (only != size_t(-1) && i != only) continue;
            m_trainer->write_params(m_timelapse.weights(i).values());
            each(i);
        }
    } catch (...) {
        m_trainer->write_params(live);
        throw;
    }
    m_trainer->write_params(live);
}

size_t Session::recorded_index(int step) const {
    const ProbeSnapshot* s = m_timelapse.nearest(step);
    if (!s) throw Error("the time-lapse holds no recorded step yet");
    size_t i = size_t(s - m_timelapse.snapshots().data());
    if (m_timelapse.weights(i).empty())
        throw Error("step " + std::to_string(s->step) + " was saved without its weights (an older checkpoint): only its "
                    "probe's views can be shown, not another text's");
    return i;
}

ProbeSnapshot Session::view_at(int step, const std::vector<uint32_t>& tokens, const std::string& text) {
    size_t i = recorded_index(step);
    ProbeSnapshot out;
    with_recorded_weights([&](size_t) { out = probe_now(tokens, text); }, i);
    out.step = m_timelapse.snapshots()[i].step;
    return out;
}

void Session::at_weights(int step, const std::function<void(int)>& fn) {
    if (step >= 0) {
        size_t i = recorded_index(step);
        with_recorded_weights([&](size_t) { fn(m_timelapse.snapshots()[i].step); }, i);
        return;
    }
    std::vector<float> live = m_trainer->read_params();
    try {
        fn(step_count());
    } catch (...) {
        m_trainer->write_params(live);
        throw;
    }
    m_trainer->write_params(live);
}

Session::Ablation Session::ablate(int step, const std::vector<HeadId>& heads, AblationMode mode,
                                  const std::vector<uint32_t>& tokens, const std::string& text) {
    Ablation out;
    const Model& model = m_trainer->model();
    at_weights(step, [&](int at) {
        out.step = at;
        std::vector<float> w = m_trainer->read_params();
        Trainer::FixedEval intact = m_trainer->evaluate_fixed(fixed_batches(), k_fixed_seed, false, mode == AblationMode::Mean);
        out.val_intact = intact.loss;
        out.intact = probe_now(tokens, text);
        m_trainer->write_params(ablate_weights(std::move(w), model.layout(), config(), heads, mode, intact.head_means));
        out.val_ablated = m_trainer->evaluate_fixed(fixed_batches(), k_fixed_seed, false, false).loss;
        out.ablated = probe_now(tokens, text);
    });
    out.intact.step = out.ablated.step = out.step;
    return out;
}

SessionSample Session::sample_ablated(int step, const std::vector<HeadId>& heads, AblationMode mode,
                                     const std::string& prompt, int n_chars, uint64_t seed) {
    SessionSample out;
    out.prompt = prompt;
    const Config& c = config();
    at_weights(step, [&](int at) {
        out.step = at;
        std::vector<double> means;
        if (mode == AblationMode::Mean) means = m_trainer->evaluate_fixed(fixed_batches(), k_fixed_seed, false, true).head_means;
        m_trainer->write_params(ablate_weights(m_trainer->read_params(), m_trainer->model().layout(), c, heads, mode, means));
        out.text = m_trainer->generate(prompt, n_chars, c.temperature, c.top_k, seed, &out.ids);
    });
    out.left_out = m_data.unknown_chars(prompt);
    return out;
}

std::vector<double> Session::head_importance(int step, AblationMode mode, int* step_used,
                                             const std::function<void(int, int)>& progress) {
    const Model& model = m_trainer->model();
    const int L = model.n_layer(), NH = model.n_head();
    if (L == 0) throw Error("the bigram model has no attention: there is no head to knock out");
    std::vector<double> out(size_t(L) * NH, 0.0);
    at_weights(step, [&](int at) {
        if (step_used) *step_used = at;
        std::vector<float> w = m_trainer->read_params();
        Trainer::FixedEval intact = m_trainer->evaluate_fixed(fixed_batches(), k_fixed_seed, false, mode == AblationMode::Mean);
        for (int l = 0; l < L; l++)
            for (int h = 0; h < NH; h++) {
                if (progress) progress(l * NH + h, L * NH);
                m_trainer->write_params(ablate_weights(w, model.layout(), config(), {{l, h}}, mode, intact.head_means));
                out[size_t(l) * NH + h] = m_trainer->evaluate_fixed(fixed_batches(), k_fixed_seed, false, false).loss - intact.loss;
            }
    });
    return out;
}

const std::vector<HeadScores>& Session::head_scores_at(int step, int* step_used) {
    size_t i = recorded_index(step);
    const ProbeSnapshot& view = m_timelapse.snapshots()[i];
    if (step_used) *step_used = view.step;
    auto it = m_head_scores.find(view.step);
    if (it != m_head_scores.end()) return it->second;
    const Model& m = m_trainer->model();
    std::vector<HeadScores> scores;
    with_recorded_weights([&](size_t) {
        AttentionOf attention_of = [&](const std::vector<uint32_t>& tokens) { return m_trainer->probe(tokens); };
        scores = score_heads(attention_of, m_timelapse.tokens(), &view,
                             m_data.bpe() ? bpe_probe_vocab(*m_data.bpe()) : m_data.vocab(), config().block_size, m.n_layer(),
                             m.n_head(), config().causal);
    }, i);
    return m_head_scores[view.step] = std::move(scores);
}

std::vector<std::vector<double>> Session::loss_by_position(const std::function<void(int, int)>& progress) {
    std::vector<std::vector<double>> out;
    if (!m_timelapse.has_weights()) throw Error("the time-lapse holds no recorded weights (an older checkpoint): its loss by position cannot be computed");
    with_recorded_weights([&](size_t i) {
        if (progress) progress(int(i), int(m_timelapse.snapshots().size()));
        out.push_back(m_trainer->evaluate_fixed(fixed_batches(), k_fixed_seed, true, false).by_position);
    });
    return out;
}

const std::vector<double>& Session::loss_by_position_at(int step, int* step_used) {
    if (!m_timelapse.has_weights()) throw Error("the time-lapse holds no recorded weights (an older checkpoint): its loss by position cannot be computed");
    size_t i = recorded_index(step);
    int at = m_timelapse.snapshots()[i].step;
    if (step_used) *step_used = at;
    auto it = m_loss_by_position.find(at);
    if (it != m_loss_by_position.end()) return it->second;
    std::vector<double> v;
    with_recorded_weights([&](size_t) { v = m_trainer->evaluate_fixed(fixed_batches(), k_fixed_seed, true, false).by_position; }, i);
    return m_loss_by_position[at] = std::move(v);
}

SessionSample Session::sample_at(int step, const std::string& prompt, int n_chars, uint64_t seed) {
    size_t i = recorded_index(step);
    using clock = std::chrono::steady_clock;
    auto t0 = clock::now();
    const Config& c = config();
    SessionSample out;
    out.step = m_timelapse.snapshots()[i].step;
    out.prompt = prompt;
    with_recorded_weights([&](size_t) { out.text = m_trainer->generate(prompt, n_chars, c.temperature, c.top_k, seed, &out.ids); }, i);
    out.left_out = m_data.unknown_chars(prompt);
    out.seconds = std::chrono::duration<double>(clock::now() - t0).count();
    return out;
}

const ProbeSnapshot& Session::record_probe() {
    int step = step_count();
    if (!m_timelapse.has_step(step)) {
        auto t0 = std::chrono::steady_clock::now();
        // the weights first: the probe's views are cached, the weights are the record
        std::vector<float> weights = m_trainer->read_params();
        m_timelapse.add(probe_now(m_timelapse.tokens(), m_timelapse.text()), std::move(weights));
        m_record_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    return *m_timelapse.nearest(step);
}

bool Session::evaluation_due() const {
    int step = step_count();
    const Config& c = config();
    return (step % c.eval_interval == 0 || step == c.max_iters) && !evaluated_at_current_step();
}

SessionStep Session::step() {
    using clock = std::chrono::steady_clock;
    SessionStep s;
    clock::time_point t0;
    try {
        if (m_recording && timelapse_due(step_count()) && !m_timelapse.has_step(step_count())) record_probe();
        inject_fault(*m_trainer, m_fault);  // --inject-fault (tests): nothing unless this is its step
        t0 = clock::now();
        s.result = m_trainer->step();
    } catch (const DeviceError& e) {
        if (m_events) m_events->device_failed(e.what());
        throw;
    }
    s.seconds = std::chrono::duration<double>(clock::now() - t0).count();
    Interval& iv = s.result.warmup ? m_speed.warmup : m_speed.ordinary;
    iv.seconds += s.seconds;
    iv.tokens += long(config().batch_size) * config().block_size;
    iv.steps++;
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
    const Interval& iv = m_speed.timed();
    if (iv.tokens > 0 && iv.seconds > 0) m_last_tps = iv.tokens / iv.seconds;
    out.ms_per_step = ms_per_step_since_eval();
    m_speed = {};
    out.eval = {step_count(), e.train, e.val, m_last_tps};
    m_history.evals.push_back(out.eval);
    if (m_recording) record_probe();
    update_metrics();
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
    out.text = m_trainer->generate(prompt, n_chars, c.temperature, c.top_k, seed, &out.ids);
    out.left_out = m_data.unknown_chars(prompt);
    out.seconds = std::chrono::duration<double>(clock::now() - t0).count();
    if (m_events) m_events->sampled(out);
    return out;
}

Checkpoint Session::checkpoint() {
    Checkpoint ck{m_trainer->config(), m_data.vocab(), m_data.name(), m_trainer->export_state(), m_history, m_timelapse};
    ck.tokenizer = m_data.bpe();
    return ck;
}

void Session::save(const std::string& path) {
    save_checkpoint(path, checkpoint(), m_trainer->model().params_info());
    m_saved_step = step_count();
    m_saved_path = path;
    if (m_events) m_events->checkpoint_written(path, m_saved_step);
}

// One CSV row: tokens/s left empty where unknown (a checkpoint from before it was kept).
static void metrics_row(std::ostream& f, const RunHistory::Eval& e) {
    f << e.step << ',' << e.train << ',' << e.val << ',';
    if (e.tps >= 0) f << e.tps;
    f << '\n';
}
static const char* const k_metrics_header = "step,train_loss,val_loss,tokens_per_s\n";

void Session::write_metrics_to(const std::string& path) {
    namespace fs = std::filesystem;
    m_metrics.close();
    m_metrics_path.clear();
    m_metrics_error.clear();
    forget_files("the --metrics file");
    if (std::string why = write_problem(path, "the --metrics file"); !why.empty()) throw Error(why);
    register_file("the --metrics file", path);
    m_metrics_path = path;
    std::error_code ec;
    auto st = fs::status(path, ec);
    m_metrics_stream = fs::exists(st) && !fs::is_regular_file(st);
    if (m_metrics_stream) {  // a device or pipe (/dev/stdout, a FIFO): rows appended as they come
        // a FIFO nobody reads yet: opening it to write would wait, silently, until someone does; O_NONBLOCK says ENXIO
        // instead. The probe stays open until the stream is, so a reader never sees an end between the two opens.
        int probe = -1;
        if (fs::is_fifo(st)) {
            probe = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
            if (probe < 0 && errno == ENXIO)
                throw Error("cannot write the --metrics file '" + path + "': it is a pipe (FIFO) that nobody reads: start "
                            "its reader first (cat " + path + "), or name a regular file");
        }
        m_metrics.open(path);
        if (probe >= 0) ::close(probe);
        m_metrics_rows = 0;
        if (m_metrics) m_metrics << k_metrics_header << std::flush;
        if (!m_metrics) throw Error("cannot write the --metrics file '" + path + "': check it is writable");
    }
    update_metrics();
    if (!m_metrics_error.empty()) throw Error(m_metrics_error);
}

void Session::update_metrics() {
    if (m_metrics_path.empty()) return;
    if (!m_metrics_stream) {
        m_metrics_error = rewrite_metrics();
        return;
    }
    m_metrics_rows = std::min(m_metrics_rows, m_history.evals.size());  // after a revert: rows from there on again
    for (; m_metrics_rows < m_history.evals.size(); m_metrics_rows++) metrics_row(m_metrics, m_history.evals[m_metrics_rows]);
    m_metrics.flush();
    m_metrics_error = m_metrics ? "" : "cannot write the --metrics file '" + m_metrics_path + "' (rows from step " +
                                           std::to_string(m_history.evals.empty() ? 0 : m_history.evals.back().step) +
                                           " are lost)";
}

std::string Session::rewrite_metrics() {
    std::ostringstream f;
    f << k_metrics_header;
    for (const auto& e : m_history.evals) metrics_row(f, e);
    try {
        write_file_atomic(m_metrics_path, "the --metrics file", f.str());
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

bool Session::keep_good_state() {
    if (!can_keep_good_state()) return false;
    TrainerState st = m_trainer->export_state();
    for (float v : st.params)
        if (!std::isfinite(v)) return false;
    m_good = {m_trainer->config(), m_data.vocab(), m_data.name(), std::move(st), m_history};
    m_good.tokenizer = m_data.bpe();
    m_has_good = true;
    return true;
}

void Session::revert_to_good() {
    if (!m_has_good) throw Error("no good state is kept to revert to");
    m_trainer->import_state(m_good.state);
    m_history = m_good.history;
    m_timelapse.truncate_after(m_good.state.step);
    m_head_scores.clear();
    m_loss_by_position.clear();
    m_diverged = false;
    update_metrics();
}

void Session::save_good_state(const std::string& path) {
    if (!m_has_good) throw Error("no good state is kept");
    Checkpoint ck = m_good;
    ck.timelapse = m_timelapse;
    ck.timelapse.truncate_after(ck.state.step);
    save_checkpoint(path, ck, m_trainer->model().params_info());
}

}  // namespace attn
