// The training loop: batches picked on the CPU, everything else recorded once and replayed on the GPU.
#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>

#include "ops/adamw.h"
#include "ops/attention.h"
#include "train/replica_shard.h"

namespace attn {

Trainer::Trainer(Context& ctx, const Dataset& data, const Config& cfg, int replicas, const TrainerState* start)
    : m_ctx(ctx), m_data(data), m_cfg(cfg), m_kc(ctx), m_rng(cfg.seed), m_eval_rng(cfg.seed ^ 0x5eedULL) {
    check(ctx, data, cfg);
    if (replicas < 0 || replicas > int(ops::k_max_replicas))
        throw Error("replicas: from 1 to " + std::to_string(ops::k_max_replicas) + " devices, or 0 to choose (got " +
                    std::to_string(replicas) + ")");
    m_replicas = replicas == 0 ? replicas_for(ctx, cfg, data.vocab_size()) : std::min(replicas, cfg.batch_size);
    m_model = std::make_unique<Model>(ctx, m_kc, cfg, data.vocab_size(), m_replicas > 1);
    if (!start) m_model->init(cfg.seed);
    m_tokens = Buffer(ctx, data.tokens().size() * 4);
    m_tokens.upload(data.tokens());
    m_gen_tokens = Buffer(ctx, (cfg.block_size + 1) * 4, true);
    m_gen_offsets = Buffer(ctx, 4, true);
    m_gen_offsets.fill_zero();
    m_hyper = Buffer(ctx, sizeof(ops::AdamWHyper), true);
    m_seed = Buffer(ctx, 8, true);
    m_seed.fill_zero();
    if (m_replicas > 1) {
        try {
            add_peers();
        } catch (const DeviceError&) {
            throw;
        } catch (const std::exception&) {  // chosen, not asked for: a driver that makes no second device trains on one
            if (replicas != 0) throw;
            m_shards.clear();
            m_replicas = 1;
        }
    }
    if (start) import_state(*start);  // every replica's weights and moments
    build_programs();
}

Trainer::~Trainer() = default;

size_t Trainer::step_submits() const {
    return m_shards.empty() ? m_step_prog->submit_count() : m_shards[0]->prog[0][Shard::Step]->submit_count();
}

std::vector<std::pair<std::string, double>> Trainer::last_kernel_times() const {
    if (m_shards.empty()) return m_prof_prog ? m_prof_prog->kernel_times() : std::vector<std::pair<std::string, double>>{};
    const Shard& s = *m_shards[0];
    if (!s.prog[1][m_last_kind]) return {};
    return s.prog[1][m_last_kind]->kernel_times();
}


std::string Trainer::heavy_note(const Context& ctx, const Config& cfg, int vocab_size) {
    double gflop = 2e-9 * step_macs(cfg, vocab_size);
    if (!ctx.policy().cpu_device || gflop <= 20) return "";
    char buf[320];
    std::snprintf(buf, sizeof buf, "%.0f GFLOP a training step is a GPU job: on this CPU driver expect seconds to minutes "
                  "a step and long loss estimates", gflop);
    // what makes it quicker to watch: a smaller batch and fewer evaluation batches, where they are larger
    std::string quicker, flags;
    if (cfg.batch_size > 8) quicker += "batch size 8", flags += "--batch-size 8";
    if (cfg.eval_iters > 20) {
        quicker += quicker.empty() ? "eval iters 20" : " and eval iters 20";
        flags += flags.empty() ? "--eval-iters 20" : " --eval-iters 20";
    }
    std::string note = buf;
    if (!quicker.empty()) note += " (" + quicker + ", " + flags + ", make it quicker to watch)";
    return note;
}

double Trainer::step_macs(const Config& cfg, int vocab_size) {
    return 3.0 * double(make_layout(cfg, vocab_size).flat) * cfg.batch_size * cfg.block_size;
}

int Trainer::cpu_threads_for(const Config& cfg, int vocab_size) {
    return KernelPolicy::cpu_threads_for(step_macs(cfg, vocab_size));
}

void Trainer::build_programs() {
    flush();  // the replicas' inboxes are about to be remade
    m_since_record = 0;
    int B = m_cfg.batch_size, T = m_cfg.block_size;
    double step_macs = Trainer::step_macs(m_cfg, m_data.vocab_size());
    double budget = m_ctx.policy().submit_budget(step_macs);
    if (m_measured_budget > 0) budget = m_measured_budget;
    m_step_macs = step_macs;
    m_act = std::make_unique<Activations>(m_ctx, m_cfg, m_data.vocab_size(), B, false);
    m_offsets = Buffer(m_ctx, B * 4, true);
    m_eval_offsets = Buffer(m_ctx, B * 4, true);
    size_t NH = m_model->n_head(), L = m_model->n_layer(), slice = NH * T * T * 4;
    m_display_b = std::clamp(m_display_b, 0, B - 1);
    m_att_display = Buffer(m_ctx, L * NH * T * T * 4);
    m_att_display.fill_zero();
    m_last_offsets.resize(B);  // kept: a re-record (another display element) keeps last_batch_tokens' batch

    m_budget = budget;
    if (m_shards.empty()) {
        m_step_prog = std::make_unique<Program>(m_ctx, false, budget);
        record_step(*m_step_prog);
        record_profiled_step();
    }
    m_probe_fwd = {};  // the one-sequence forwards: recorded again when next needed (forward_at)
    m_gen_fwd.clear();
    auto record_eval_and_gen = [&] {
        m_eval_prog = std::make_unique<Program>(m_ctx, false, budget);
        m_eval_prog->begin();
        m_model->record_forward(*m_eval_prog, *m_act, m_tokens, m_eval_offsets, m_seed, true, false);
        m_eval_prog->end();

        // the attention preview: the eval forward on the display batch up to the last attention weights, copied as
        // the step copies them
        m_preview_prog = std::make_unique<Program>(m_ctx, false, budget);
        m_preview_prog->begin();
        m_model->record_forward(*m_preview_prog, *m_act, m_tokens, m_eval_offsets, m_seed, false, false, true);
        m_preview_prog->barrier("the display copy reads the attention weights");
        for (size_t l = 0; l < L; l++)
            m_preview_prog->copy(m_act->blocks[l].att, m_display_b * slice, m_att_display, l * slice, slice);
        m_preview_prog->end();

        m_grad_prog = std::make_unique<Program>(m_ctx, false, budget);
        m_grad_prog->begin();
        m_model->record_forward(*m_grad_prog, *m_act, m_tokens, m_offsets, m_seed, true, true);
        m_grad_prog->barrier("backward reads the forward activations");
        m_model->record_backward(*m_grad_prog, *m_act, m_tokens, m_offsets, m_seed);
        m_grad_prog->end();
    };
    if (m_shards.empty())
        record_eval_and_gen();
    else
        build_shards(record_eval_and_gen);  // while the other replicas record theirs
}

Trainer::Forward& Trainer::forward_at(int T, bool probe) {
    Forward* f = &m_probe_fwd;
    if (!probe) {
        size_t k = 0;
        while ((1 << k) < T) k++;
        if (m_gen_fwd.size() <= k) m_gen_fwd.resize(k + 1);
        f = &m_gen_fwd[k];
    }
    if (f->act && f->act->T == T) return *f;
    f->prog.reset();  // before the activations it was recorded on
    f->act = std::make_unique<Activations>(m_ctx, m_cfg, m_data.vocab_size(), 1, true, T, true);
    f->prog = std::make_unique<Program>(m_ctx);
    f->prog->begin();
    m_model->record_forward(*f->prog, *f->act, m_gen_tokens, m_gen_offsets, m_seed, probe, false);
    f->prog->end();
    return *f;
}

// The training step: forward, backward, AdamW, and the copy of one batch element's attention for display.
void Trainer::record_step(Program& s) {
    size_t NH = m_model->n_head(), L = m_model->n_layer(), T = m_cfg.block_size;
    s.begin();
    m_model->record_forward(s, *m_act, m_tokens, m_offsets, m_seed, true, true);
    s.barrier("backward reads the forward activations");
    m_model->record_backward(s, *m_act, m_tokens, m_offsets, m_seed);
    s.barrier("AdamW reads every gradient");
    m_model->record_update(s, m_hyper);
    // (B, NH, T, T) per layer -> the display copy of one batch element: contiguous NH*T*T floats
    size_t slice = NH * T * T * 4;
    for (size_t l = 0; l < L; l++) s.copy(m_act->blocks[l].att, m_display_b * slice, m_att_display, l * slice, slice);
    s.end();
}

void Trainer::set_live(const Config& c) {
    flush();  // the last step's update with the settings it ran with
    Config next = with_live_fields(m_cfg, c);  // only the live fields change; the model's shape stays
    auto errs = validate(next);
    if (!errs.empty()) throw Error(errs.front().message);
    check_cpu_loops(m_ctx, next, m_data.vocab_size());  // a larger batch
    bool rerecord = next.batch_size != m_cfg.batch_size || next.causal != m_cfg.causal || next.dropout != m_cfg.dropout ||
                    (next.grad_clip > 0) != (m_cfg.grad_clip > 0);  // the norm's dispatches come or go
    const Config before = m_cfg;
    m_cfg = next;
    if (!rerecord) return;
    auto record = [&] {
        m_model->set_switches(m_cfg);  // and the replicas' (build_shards)
        build_programs();
    };
    try {
        record();
    } catch (const DeviceError&) {
        throw;
    } catch (const std::exception&) {  // e.g. a batch whose tensors exceed a limit: the trainer as it was, then why
        m_cfg = before;
        record();
        throw;
    }
}

TrainerState Trainer::export_state() {
    flush();
    TrainerState s;
    s.step = m_step;
    for (int i = 0; i < 4; i++) {
        s.rng[i] = m_rng.state()[i];
        s.eval_rng[i] = m_eval_rng.state()[i];
    }
    s.params = m_model->read_params();
    s.adam_m = m_model->adam_m.read<float>(m_model->flat_size());
    s.adam_v = m_model->adam_v.read<float>(m_model->flat_size());
    return s;
}

std::vector<float> Trainer::read_params() {
    flush();
    return m_model->read_params();
}

void Trainer::write_params(const std::vector<float>& params) {
    if (params.size() != m_model->flat_size())
        throw Error("recorded weights of " + std::to_string(params.size()) + " values do not fit this model (" +
                    std::to_string(m_model->flat_size()) + ")");
    flush();
    m_model->params.upload(params);
}

void Trainer::import_state(const TrainerState& s) {
    size_t n = m_model->flat_size();
    if (s.params.size() != n || s.adam_m.size() != n || s.adam_v.size() != n)
        throw Error("the saved state does not fit this model (" + std::to_string(s.params.size()) + " values, the model has " +
                    std::to_string(n) + ")");
    m_pending = false;  // replaced below
    m_step = s.step;
    m_rng.set_state(s.rng);
    m_eval_rng.set_state(s.eval_rng);
    m_model->params.upload(s.params);
    m_model->adam_m.upload(s.adam_m);
    m_model->adam_v.upload(s.adam_v);
    for (size_t r = 1; r < m_shards.size(); r++) {  // every replica holds the same parameters and moments
        Model& m = *m_shards[r]->model;
        m.params.upload(s.params);
        m.adam_m.upload(s.adam_m);
        m.adam_v.upload(s.adam_v);
    }
}

void Trainer::set_display_batch(int b) {
    b = std::clamp(b, 0, m_cfg.batch_size - 1);
    if (b == m_display_b) return;
    m_display_b = b;
    build_programs();
}

void Trainer::set_profiling(bool on) {
    if (on == m_profiling) return;
    m_profiling = on;
    m_profile_next = false;
    record_profiled_step();
}

// The step's twin with a timestamp after every dispatch, while profiling is on.
void Trainer::record_profiled_step() {
    m_prof_prog.reset();
    if (!m_shards.empty()) {  // the first replica's twins
        build_shards();
        return;
    }
    if (!m_profiling) return;
    m_prof_prog = std::make_unique<Program>(m_ctx, true, m_budget);
    record_step(*m_prof_prog);
}

void Trainer::sample_batch(std::vector<uint32_t>& offs, bool val) {
    size_t T = m_cfg.block_size;
    Rng& rng = val ? m_eval_rng : m_rng;
    size_t base = val ? m_data.n_train() : 0;
    size_t len = val ? m_data.n_val() : m_data.n_train();
    for (auto& o : offs) o = uint32_t(base + rng.below(len - T));  // the lecture's randint(len(data) - block_size)
}

void Trainer::write_hyper(int t) {
    ops::AdamWHyper h{m_cfg.lr_at(t - 1), 0.9f, m_cfg.beta2, 1e-8f, m_cfg.weight_decay, float(1.0 - std::pow(0.9, t)),
                      float(1.0 - std::pow(double(m_cfg.beta2), t)), m_cfg.grad_clip};
    std::memcpy(m_hyper.mapped(), &h, sizeof h);
    auto key = slice_key(0);
    std::memcpy(m_seed.mapped(), key.data(), 8);
    for (auto& sh : m_shards) {
        if (sh->hyper != &m_hyper) std::memcpy(sh->hyper->mapped(), &h, sizeof h);
        key = slice_key(sh->slice);
        std::memcpy(sh->seed.mapped(), key.data(), 8);
    }
}

StepResult Trainer::step(const std::vector<uint32_t>* fixed) {
    if (m_rerecord) {  // before this step's inputs are written: build_programs makes new buffers
        m_rerecord = false;
        build_programs();
    }
    if (fixed && fixed->size() == m_last_offsets.size()) m_last_offsets = *fixed;
    else sample_batch(m_last_offsets, false);
    std::memcpy(m_offsets.mapped(), m_last_offsets.data(), m_last_offsets.size() * 4);
    // AdamW's step t counts from 1; with replicas the update that runs now is the previous step's
    write_hyper(m_pending ? m_step : m_step + 1);
    StepResult r;
    // after any re-record above: a warm-up step is not timed for the submit budget (cold runs); profiled when asked
    // (headless --profile of a few long steps needs them; the window leaves them out of its table)
    bool warmup = warming_up();
    m_since_record++;
    bool profiled = m_profile_next && (m_prof_prog || (!m_shards.empty() && m_shards[0]->prog[1][0]));
    m_profile_next = false;
    if (!m_shards.empty()) {
        r = step_replicated(profiled, warmup);
        r.warmup = warmup;
        r.grad_norm = last_grad_norm();
        return r;
    }
    r.warmup = warmup;
    auto t0 = std::chrono::steady_clock::now();
    Program& prog = profiled ? *m_prof_prog : *m_step_prog;
    r.gpu_ms = prog.run();
    r.gpu_timed = prog.last_run_timed();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.profiled = profiled;
    if (!warmup) note_step_time(wall);
    const float* res = static_cast<const float*>(m_act->result.mapped());
    r.loss = res[0];
    r.finite = res[1] == 0.0f && std::isfinite(res[0]);
    r.grad_norm = last_grad_norm();
    m_step++;
    return r;
}

float Trainer::last_grad_norm() const {
    if (m_cfg.grad_clip <= 0) return -1;
    // Model::clip (host-visible): {scale, norm}, written by grad_norm's second dispatch; shard 0's model is this one
    float norm = static_cast<const float*>(m_model->clip.mapped())[1];
    return norm > 0 ? norm : -1;
}

// One submit that long would stall the window on a single queue: cut the step (bit-identical results). With
// replicas, each replica's step is its slice's, so the budget cuts it into about the same time.
void Trainer::note_step_time(double wall) {
    m_long_steps = m_budget == 0 && wall > m_long_step_s ? m_long_steps + 1 : 0;
    if (m_long_steps >= 2) {
        m_measured_budget = std::max(1e6, m_step_macs / m_replicas * m_submit_s / wall);
        m_long_steps = 0;
        m_rerecord = true;
    }
}

EvalResult Trainer::estimate_loss(const std::function<void(int done, int total)>& progress) {
    flush();
    EvalResult e;
    std::vector<uint32_t> offs(m_cfg.batch_size);
    const float* res = static_cast<const float*>(m_act->result.mapped());
    const Rng rng = m_rng, eval_rng = m_eval_rng;  // put back when stopped: as if never called
    for (int split = 0; split < 2; split++) {
        double sum = 0;
        for (int i = 0; i < m_cfg.eval_iters; i++) {
            auto stopped = [&] {
                m_rng = rng, m_eval_rng = eval_rng;
                return Interrupted();
            };
            if (m_stop && m_stop()) throw stopped();
            if (progress) progress(split * m_cfg.eval_iters + i, 2 * m_cfg.eval_iters);
            sample_batch(offs, split == 1);
            std::memcpy(m_eval_offsets.mapped(), offs.data(), offs.size() * 4);
            // also asked between a big model's submits: the gpt preset's one batch takes seconds on a CPU
            if (!m_eval_prog->run_unless(m_stop)) throw stopped();
            sum += res[0];
        }
        (split == 0 ? e.train : e.val) = sum / m_cfg.eval_iters;
    }
    return e;
}

Trainer::FixedEval Trainer::evaluate_fixed(int batches, uint64_t seed, bool by_position, bool head_means) {
    flush();
    const int B = m_cfg.batch_size, T = m_cfg.block_size;
    const int L = m_model->n_layer(), A = L > 0 ? m_cfg.attn_dim() : 0;
    FixedEval out;
    if (by_position) out.by_position.assign(size_t(T), 0.0);
    if (head_means) out.head_means.assign(size_t(L) * A, 0.0);
    Rng rng(seed);
    std::vector<uint32_t> offs(static_cast<size_t>(B));
    const size_t base = m_data.n_train(), span = m_data.n_val() - size_t(T);
    const float* res = static_cast<const float*>(m_act->result.mapped());
    for (int i = 0; i < batches; i++) {
        for (auto& o : offs) o = uint32_t(base + rng.below(span));
        std::memcpy(m_eval_offsets.mapped(), offs.data(), offs.size() * 4);
        m_eval_prog->run();
        out.loss += res[0];
        if (by_position) {
            std::vector<float> losses = m_act->losses.read<float>(size_t(B) * T);  // (B, T)
            for (int b = 0; b < B; b++)
                for (int t = 0; t < T; t++) out.by_position[size_t(t)] += losses[size_t(b) * T + t];
        }
        for (int l = 0; head_means && l < L; l++) {
            std::vector<float> y = m_act->blocks[size_t(l)].y.read<float>(size_t(B) * T * A);  // (B, T, A)
            for (size_t r = 0; r < size_t(B) * T; r++)
                for (int a = 0; a < A; a++) out.head_means[size_t(l) * A + a] += y[r * A + a];
        }
    }
    out.loss /= std::max(1, batches);
    for (double& v : out.by_position) v /= double(std::max(1, batches)) * B;
    for (double& v : out.head_means) v /= double(std::max(1, batches)) * B * T;
    return out;
}

void Trainer::set_batch(const std::vector<uint32_t>& offsets) {
    if (offsets.size() != size_t(m_cfg.batch_size)) throw Error("internal error: set_batch needs batch_size offsets");
    m_last_offsets = offsets;
    std::memcpy(m_offsets.mapped(), offsets.data(), offsets.size() * 4);
}

float Trainer::forward_backward() {
    flush();
    m_grad_prog->run();
    return static_cast<const float*>(m_act->result.mapped())[0];
}

float Trainer::forward_loss() {
    flush();
    std::memcpy(m_eval_offsets.mapped(), m_last_offsets.data(), m_last_offsets.size() * 4);
    m_eval_prog->run();
    return static_cast<const float*>(m_act->result.mapped())[0];
}

bool Trainer::preview_attention() {
    flush();
    std::vector<uint32_t> offs(m_cfg.batch_size);
    const Rng rng = m_rng;
    sample_batch(offs, false);  // the next step's batch...
    m_rng = rng;                // ...which the next step still draws
    m_last_offsets = offs;
    std::memcpy(m_eval_offsets.mapped(), offs.data(), offs.size() * 4);
    return m_preview_prog->run_unless(m_stop);  // a big model's forward takes seconds on a CPU
}

std::vector<float> Trainer::read_attention() const {
    return m_att_display.read<float>(m_att_display.bytes() / 4);
}

ProbeSnapshot Trainer::probe(const std::vector<uint32_t>& tokens, std::vector<float>* logits_out,
                             std::vector<float>* att_f32) {
    int T = m_cfg.block_size, V = m_data.vocab_size(), P = int(tokens.size());
    if (P < 1 || P > T)
        throw Error("a probe holds 1 to " + std::to_string(T) + " characters (the block size); this one " +
                    std::to_string(P));
    flush();
    auto* gt = static_cast<uint32_t*>(m_gen_tokens.mapped());
    std::memset(gt, 0, (T + 1) * 4);
    std::memcpy(gt, tokens.data(), P * 4);
    Forward& fwd = forward_at(P, true);  // P positions: the losses' last target (gt[P], 0) is never shown
    fwd.prog->run();
    const Activations& act = *fwd.act;

    ProbeSnapshot s;
    s.step = m_step;
    int L = m_model->n_layer(), NH = m_model->n_head();
    s.att.resize(size_t(L) * NH * P * P);
    if (att_f32) att_f32->assign(s.att.size(), 0.0f);
    for (int l = 0; l < L; l++) {  // (1, NH, P, P) each layer
        std::vector<float> a = act.blocks[l].att.read<float>(size_t(NH) * P * P);
        for (int h = 0; h < NH; h++)
            for (int i = 0; i < P; i++)
                for (int j = 0; j < P; j++) {
                    size_t at = ((size_t(l) * NH + h) * P + i) * P + j;
                    float w = a[at - size_t(l) * NH * P * P];
                    s.att[at] = float_to_half(w);
                    if (att_f32) (*att_f32)[at] = w;
                }
    }
    std::vector<float> losses = act.losses.read<float>(P);  // position t: -log p(token t+1 | tokens <= t)
    s.char_loss.assign(losses.begin(), losses.begin() + (P - 1));
    const float* logits = static_cast<const float*>(act.logits.mapped());
    if (logits_out) logits_out->resize(size_t(P) * V);
    s.top_ids.resize(size_t(P) * k_probe_top);
    s.top_p.resize(size_t(P) * k_probe_top);
    std::vector<int> order(V);
    std::vector<double> prob(V);
    int K = std::min(k_probe_top, V);
    for (int t = 0; t < P; t++) {
        const float* row = logits + size_t(t) * act.logits_ld;
        if (logits_out) std::copy(row, row + V, logits_out->begin() + size_t(t) * V);
        double mx = row[0], sum = 0;
        for (int v = 1; v < V; v++) mx = std::max(mx, double(row[v]));
        for (int v = 0; v < V; v++) sum += prob[v] = std::exp(double(row[v]) - mx);
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + K, order.end(),
                          [&](int a, int b) { return prob[a] > prob[b] || (prob[a] == prob[b] && a < b); });
        for (int k = 0; k < k_probe_top; k++) {
            s.top_ids[size_t(t) * k_probe_top + k] = k < K ? order[k] : -1;
            s.top_p[size_t(t) * k_probe_top + k] = k < K ? float(prob[order[k]] / sum) : 0.0f;
        }
    }
    return s;
}

std::vector<uint32_t> Trainer::last_batch_tokens(int b) const {
    std::vector<uint32_t> out;
    if (b < 0 || b >= int(m_last_offsets.size())) return out;
    const auto& toks = m_data.tokens();
    for (int t = 0; t < m_cfg.block_size; t++) out.push_back(toks[m_last_offsets[b] + t]);
    return out;
}

std::string Trainer::generate(const std::string& prompt, int n_chars, float temperature, int top_k, uint64_t seed,
                              std::vector<uint32_t>* ids) {
    flush();
    Rng rng(seed);
    std::vector<uint32_t> ctx = m_data.encode(prompt);
    if (ctx.empty()) ctx.push_back(0);  // the lecture starts from token 0 (a newline in tiny Shakespeare)
    int T = m_cfg.block_size, V = m_data.vocab_size();
    std::vector<uint32_t> out;
    std::vector<double> probs(V);
    std::vector<int> order(V);
    auto* gt = static_cast<uint32_t*>(m_gen_tokens.mapped());
    for (int n = 0; n < n_chars; n++) {
        if (m_stop && m_stop()) throw Interrupted(m_data.decode(out));
        // crop to the last block_size tokens; positions after the context are padding the causal mask ignores
        size_t len = std::min<size_t>(ctx.size(), T);
        std::memset(gt, 0, (T + 1) * 4);
        std::memcpy(gt, ctx.data() + ctx.size() - len, len * 4);
        int pow2 = 1;  // without the causal mask (an encoder) every position sees the padding: the whole block
        while (pow2 < int(len) && m_cfg.causal) pow2 *= 2;
        Forward& fwd = forward_at(m_cfg.causal ? std::min(pow2, T) : T, false);
        fwd.prog->run();
        const float* row = static_cast<const float*>(fwd.act->logits.mapped()) + (len - 1) * fwd.act->logits_ld;
        double mx = -1e30;
        for (int v = 0; v < V; v++) mx = std::max(mx, double(row[v]) / temperature);
        for (int v = 0; v < V; v++) probs[v] = double(row[v]) / temperature;
        if (top_k > 0 && top_k < V) {
            for (int v = 0; v < V; v++) order[v] = v;
            std::nth_element(order.begin(), order.begin() + (top_k - 1), order.end(),
                             [&](int a, int b) { return probs[a] > probs[b]; });
            double kth = probs[order[top_k - 1]];
            for (int v = 0; v < V; v++)
                if (probs[v] < kth) probs[v] = -INFINITY;
        }
        double sum = 0;
        for (int v = 0; v < V; v++) sum += probs[v] = std::exp(probs[v] - mx);
        double u = rng.uniform() * sum, acc = 0;
        int pick = V - 1;
        for (int v = 0; v < V; v++) {
            acc += probs[v];
            if (u < acc) { pick = v; break; }
        }
        ctx.push_back(uint32_t(pick));
        out.push_back(uint32_t(pick));
    }
    if (ids) *ids = out;
    return m_data.decode(out);
}

}  // namespace attn
