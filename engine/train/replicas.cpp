// Data parallelism over one Vulkan device per core on a CPU driver (Trainer::replicas_for): the replicas' devices,
// the slices of every batch, the replicated step and the update that averages the slices' gradients.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <sched.h>

#include "ops/adamw.h"
#include "train/replica_shard.h"

namespace attn {

// The first shard uses this trainer's device and model; each other one gets a device of its own (the same driver)
// with a copy of the parameters and moments, the corpus and the hyperparameter buffer.
void Trainer::add_peers() {
    for (int r = 0; r < m_replicas; r++) {
        auto sh = std::make_unique<Shard>();
        if (r == 0) {
            sh->ctx = &m_ctx;
            sh->kc = &m_kc;
            sh->model = m_model.get();
            sh->tokens = &m_tokens;
            sh->hyper = &m_hyper;
        } else {
            sh->own_ctx = std::make_unique<Context>(m_ctx.peer_options());
            sh->ctx = sh->own_ctx.get();
            sh->own_kc = std::make_unique<KernelCache>(*sh->ctx);
            sh->kc = sh->own_kc.get();
            sh->own_model = std::make_unique<Model>(*sh->ctx, *sh->kc, m_cfg, m_data.vocab_size(), true);
            sh->model = sh->own_model.get();
            sh->model->init(m_cfg.seed);
            sh->model->write_params(m_model->read_params());
            sh->own_tokens = Buffer(*sh->ctx, m_data.tokens().size() * 4);
            sh->own_tokens.upload(m_data.tokens());
            sh->tokens = &sh->own_tokens;
            sh->own_hyper = Buffer(*sh->ctx, sizeof(ops::AdamWHyper), true);
            sh->hyper = &sh->own_hyper;
            sh->worker = std::make_unique<ShardWorker>();
        }
        sh->seed = Buffer(*sh->ctx, 8, true);
        sh->seed.fill_zero();
        m_shards.push_back(std::move(sh));
    }
}

// Slices of the batch (rows B*k/R up to B*(k+1)/R) over the shards: the first shard (this trainer's device, whose
// attention weights the window draws) takes the slice holding the displayed batch element, the others the rest in
// order. Gradients are averaged in slice order whichever shard holds which, so the bits do not depend on it.
void Trainer::build_shards(const std::function<void()>& also_here) {
    flush();  // the inboxes are remade below (set_profiling comes here directly)
    m_since_record = 0;
    int B = m_cfg.batch_size, R = m_replicas, V = m_data.vocab_size();
    int shown = 0;
    for (int k = 0; k < R; k++)
        if (m_display_b >= B * k / R && m_display_b < B * (k + 1) / R) shown = k;
    std::vector<float> weights(R);
    for (int k = 0; k < R; k++) weights[k] = float(B * (k + 1) / R - B * k / R) / float(B);
    size_t flat = m_model->flat_size();
    size_t NH = m_model->n_head(), L = m_model->n_layer(), T = m_cfg.block_size;
    std::vector<int> order{shown};
    for (int k = 0; k < R; k++)
        if (k != shown) order.push_back(k);
    auto record_shard = [&](int r) {
        Shard& sh = *m_shards[r];
        int k = order[r];
        sh.slice = k;
        sh.row0 = B * k / R;
        sh.rows = B * (k + 1) / R - sh.row0;
        sh.model->set_switches(m_cfg);
        // a batch made smaller than the replicas while training (set_live) leaves some shards no rows: they only
        // apply the updates, so that their weights stay the others' (their gradients' slots stay zero, weight 0)
        sh.act = sh.rows > 0 ? std::make_unique<Activations>(*sh.ctx, m_cfg, V, sh.rows, false) : nullptr;
        sh.offsets = Buffer(*sh.ctx, sh.rows * 4, true);
        sh.inbox = Buffer(*sh.ctx, size_t(R) * flat * 4, true);
        sh.inbox.fill_zero();
        auto record = [&](Program& s, Shard::Kind kind) {
            s.begin();
            if (kind != Shard::Step) {  // the previous step's update, by the batch's gradient from every slice's
                sh.model->record_update(s, *sh.hyper, &sh.inbox, uint32_t(R), weights.data());
                if (kind == Shard::Update || sh.rows == 0) return s.end();
                s.barrier("the forward reads the updated weights");
            }
            if (sh.rows == 0) return s.end();
            sh.model->record_forward(s, *sh.act, *sh.tokens, sh.offsets, sh.seed, true, true);
            s.barrier("backward reads the forward activations");
            sh.model->record_backward(s, *sh.act, *sh.tokens, sh.offsets, sh.seed);
            if (r == 0) {  // the displayed element's attention, as Trainer::record_step
                size_t slice = NH * T * T * 4;
                for (size_t l = 0; l < L; l++)
                    s.copy(sh.act->blocks[l].att, (m_display_b - sh.row0) * slice, m_att_display, l * slice, slice);
            }
            s.end();
        };
        for (int prof = 0; prof < 2; prof++)
            for (int kind = 0; kind < 3; kind++) {
                auto& p = sh.prog[prof][kind];
                p.reset();
                if (prof && !(r == 0 && m_profiling)) continue;
                p = std::make_unique<Program>(*sh.ctx, prof == 1, m_budget);
                record(*p, Shard::Kind(kind));
            }
    };
    // Each device compiles its own pipelines as its programs are recorded: about 25 ms a pipeline on lavapipe even
    // from a warm shader cache, most of a small model's start-up. The other shards record on their own threads, at
    // the same time as the first shard and also_here on this one.
    for (int r = 1; r < R; r++) m_shards[r]->worker->post([&record_shard, r] { record_shard(r); });
    std::exception_ptr error;
    try {
        record_shard(0);
        if (also_here) also_here();
    } catch (...) {
        error = std::current_exception();
    }
    for (int r = 1; r < R; r++) {  // every worker done before anything is thrown
        try {
            m_shards[r]->worker->wait();
        } catch (...) {
            if (!error) error = std::current_exception();
        }
    }
    if (error) std::rethrow_exception(error);
}

// Runs program `kind` of every shard at once (the first shard's profiled twin if asked): returns the first shard's
// GPU time.
double Trainer::run_shards(int kind, bool profiled) {
    for (size_t r = 1; r < m_shards.size(); r++) {
        Program* p = m_shards[r]->prog[0][kind].get();
        m_shards[r]->worker->post([p] { p->run(); });
    }
    double ms = 0;
    std::exception_ptr error;
    try {
        ms = m_shards[0]->prog[profiled][kind]->run();
    } catch (...) {
        error = std::current_exception();
    }
    for (size_t r = 1; r < m_shards.size(); r++) {  // every worker done before anything is thrown
        try {
            m_shards[r]->worker->wait();
        } catch (...) {
            if (!error) error = std::current_exception();
        }
    }
    if (error) std::rethrow_exception(error);
    return ms;
}

void Trainer::flush() {
    if (!m_pending) return;
    m_pending = false;
    write_hyper(m_step);  // the pending update is step m_step - 1's
    run_shards(Shard::Update, false);
}

int Trainer::cpu_cores() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    return int(std::max(1u, std::thread::hardware_concurrency()));
}

int Trainer::replicas_for(const Context& ctx, const Config& cfg, int vocab_size) {
    return ctx.policy().replicas_for(step_macs(cfg, vocab_size),
                                     std::min({cpu_cores(), cfg.batch_size, int(ops::k_max_replicas)}));
}

uint64_t Trainer::replica_bytes() const {
    uint64_t n = 0;
    for (auto& sh : m_shards)
        if (sh->own_ctx) n += sh->own_ctx->allocated_bytes();
    return n;
}

// A fresh dropout key every step, a pure function of (seed, step): resumable and reproducible. With replicas, each
// slice of the batch its own (slice 0's is the one-device key), so that no two slices share a mask.
std::array<uint32_t, 2> Trainer::slice_key(int slice) const {
    return {uint32_t(m_cfg.seed) ^ uint32_t(m_cfg.seed >> 32) ^ 0x9E3779B9u ^ (uint32_t(slice) * 0x85EBCA6Bu),
            uint32_t(m_step)};
}

// Trainer::step on replicas() devices at once: the previous step's update (AdamW of the slices' mean) then forward and
// backward of each slice, and every slice's gradient copied to every device (lavapipe's memory is the host's: a
// memcpy) for the next step's update, or flush's.
StepResult Trainer::step_replicated(bool profiled, bool warmup) {
    StepResult r;
    r.profiled = profiled;
    for (auto& sh : m_shards)
        std::memcpy(sh->offsets.mapped(), m_last_offsets.data() + sh->row0, size_t(sh->rows) * 4);
    int kind = m_pending ? Shard::UpdateStep : Shard::Step;
    if (profiled) m_last_kind = kind;  // the one last_kernel_times reads
    auto t0 = std::chrono::steady_clock::now();
    r.gpu_ms = run_shards(kind, profiled);
    r.gpu_timed = m_shards[0]->prog[profiled][kind]->last_run_timed();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!warmup) note_step_time(wall);
    size_t bytes = m_model->flat_size() * 4;
    for (auto& from : m_shards) {
        if (from->rows == 0) continue;  // an idle shard's slot stays zero
        for (auto& to : m_shards)
            std::memcpy(static_cast<char*>(to->inbox.mapped()) + from->slice * bytes, from->model->grads.mapped(), bytes);
    }
    m_pending = true;
    double loss = 0;
    for (auto& sh : m_shards) {
        if (sh->rows == 0) continue;
        const float* res = static_cast<const float*>(sh->act->result.mapped());
        loss += double(res[0]) * sh->rows / m_cfg.batch_size;
        r.finite = r.finite && res[1] == 0.0f && std::isfinite(res[0]);
    }
    r.loss = float(loss);
    m_step++;
    return r;
}

}  // namespace attn
