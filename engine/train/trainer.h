// Trainer: the step loop on the GPU, estimate_loss, generation, and the attention weights for display.
#pragma once
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/model.h"
#include "rng.h"
#include "train/checkpoint.h"
#include "train/dataset.h"
#include "train/timelapse.h"

namespace attn {

struct StepResult {
    float loss = 0;       // mean cross-entropy of this step's batch (before the update)
    bool finite = true;   // false when any per-token loss was NaN or Inf
    double gpu_ms = 0;    // GPU time of the whole step (timestamps): this step's when gpu_timed, else an earlier one's
    bool gpu_timed = false;  // gpu_ms was read back after this step (every profiled step; others every 200 ms)
    bool profiled = false;  // this step ran with per-kernel timestamps (Trainer::profile_next_step)
    // One of the first steps of newly recorded programs (a new model, batch size, shown element, profiling): first
    // runs pay for cold memory and first dispatches (lavapipe, single-head: 6.6 ms of GPU time against 0.3), so
    // averages of a few readings leave them out.
    bool warmup = false;
    // The global L2 norm of the gradient the last AdamW update used (what nanoGPT's clip_grad_norm_ returns), -1 when
    // updates do not clip (grad_clip 0: the norm is not computed) or none has run yet. With replicas the update runs
    // at the start of the next step, so this is the step before's.
    float grad_norm = -1;
};

struct EvalResult {
    double train = 0, val = 0;
};

// Thrown by estimate_loss and generate when the stop check (Trainer::set_stop_check) says stop: the trainer is as
// it was before the call (RNG states included), so a checkpoint saved then resumes exactly. From generate,
// `text` holds the characters sampled before the stop.
struct Interrupted : Error {
    explicit Interrupted(std::string partial = {}) : Error("interrupted"), text(std::move(partial)) {}
    std::string text;
};

class Trainer {
public:
    // Checks the config against the corpus and the device; throws attn::Error with one line if it cannot run.
    // replicas: how many Vulkan devices each training step runs on (data parallelism, see replicas_for): 0 chooses
    // (replicas_for), 1 this context alone, N (up to 8, at most the batch size) N devices. start: the state to begin
    // from (a checkpoint's, as import_state takes it) instead of randomly initialised weights.
    Trainer(Context& ctx, const Dataset& data, const Config& cfg, int replicas = 0, const TrainerState* start = nullptr);
    ~Trainer();
    // The constructor's checks without building anything: the app runs them before it drops a running model for
    // another (Apply & restart, a loaded checkpoint), so a model that cannot run leaves the current one training.
    static void check(const Context& ctx, const Dataset& data, const Config& cfg);
    // On a CPU driver (lavapipe, llvmpipe's LP_MAX_TGSI_LOOP_ITERATIONS) every loop of one shader invocation stops
    // once 65535 iterations have run in all, so a kernel whose loops scale with the vocabulary (cross-entropy), the
    // rows of a batch (sums over B*T: dw, dbias, the loss's mean, the embedding's gradient) or, for head sizes the
    // vec4 attention kernels do not take (ops::attention_vec4), a block's keys x head size would return wrong sums
    // without an error. The largest shapes measured right there (tests/test_program.cpp, "[loops]"); check throws
    // for larger ones, on CPU devices only.
    static constexpr uint64_t k_cpu_max_vocab = 65536, k_cpu_max_rows = 32768, k_cpu_max_block_x_head = 16384;
    static void check_cpu_loops(const Context& ctx, const Config& cfg, int vocab_size);

    // Multiply-adds of one training step (forward + backward) of cfg's model: 3 x parameters x tokens a batch.
    static double step_macs(const Config& cfg, int vocab_size);
    // On a CPU device, for a model whose step is a GPU job (over 20 GFLOP: the gpt preset), what to expect and what
    // makes it quicker to watch; empty otherwise. Headless prints it, the window shows it under the controls.
    static std::string heavy_note(const Context& ctx, const Config& cfg, int vocab_size);
    // How many threads a CPU Vulkan driver (lavapipe) should run each dispatch on for cfg's model (ContextOptions::
    // cpu_threads): 1, no thread pool, for the lecture's small models, whose steps are many tiny dispatches; 0, the
    // driver's default (a thread per core), for bigger ones (KernelPolicy::cpu_threads_for decides).
    static int cpu_threads_for(const Config& cfg, int vocab_size);
    // Data parallelism on a CPU driver: lavapipe runs a device's work on one core (with LP_NUM_THREADS=0, what
    // cpu_threads_for picks for models up to ~2e9 multiply-adds a step), so a step of such a model uses the other
    // cores through more devices. Each replica (a device of its own on the same driver, with a copy of the parameters
    // and AdamW moments) runs forward and backward on a slice of the batch; every slice's gradient is copied to every
    // device, where AdamW (ops/adamw.h) averages them in slice order before it applies them, so every replica gets
    // the same bits. The losses, gradients and updates are those of the whole batch (to float rounding: the sums over rows
    // are split); the same number of replicas gives the same bits. Dropout masks: each slice its own key.
    // Returns one per core (at most 8 and the batch size) on such a context, else 1 (GPUs: one device is faster;
    // KernelPolicy::replicas_for decides).
    static int replicas_for(const Context& ctx, const Config& cfg, int vocab_size);
    // The cores this process may run on (its CPU affinity: a container's limit, `taskset`), at least 1.
    static int cpu_cores();
    // Devices a training step runs on (1: this context alone).
    int replicas() const { return m_replicas; }
    // Memory allocated on the other replicas' devices (their copies of the model, corpus and slices' activations).
    uint64_t replica_bytes() const;

    const Config& config() const { return m_cfg; }
    const Dataset& dataset() const { return m_data; }
    Model& model() {  // its weights as of the last step (flush)
        flush();
        return *m_model;
    }
    // With replicas, a step's AdamW update runs at the start of the next step (one submit a step); flush runs it now.
    // Everything that reads or replaces the weights calls it first (model(), estimate_loss, generate, export_state,
    // a re-recording); the results are the same bits either way.
    void flush();
    int step_count() const { return m_step; }
    // StepResult::grad_norm of the last update (flush's included).
    float last_grad_norm() const;
    size_t num_params() const { return m_model->num_params(); }

    // Live settings: learning rate, weight decay, batch size, eval settings, sampling, the causal mask and
    // dropout (the last three re-record). Settings that change parameter shapes or the seed need a new Trainer.
    void set_live(const Config& c);

    // One AdamW step on a random training batch, all on the GPU; reads back only the loss.
    // `fixed` (B,) pins the batch offsets (tests, overfitting demos); nullptr samples a random batch.
    StepResult step(const std::vector<uint32_t>* fixed = nullptr);
    // The lecture's estimate_loss: mean loss over eval_iters random batches of each split, forward only.
    // progress, if given, is called before each batch with (batches done, batches in all).
    EvalResult estimate_loss(const std::function<void(int done, int total)>& progress = {});
    // Forward only over `batches` validation batches drawn from Rng(seed): the same batches at every call and at any
    // weights, the run's own RNGs untouched (ablations and in-context learning compare losses on them). Fills
    // `out`: the mean loss; with by_position, the loss at each position of the block (T,), averaged over the
    // batches' rows; with head_means, each block's attention output y averaged over batches, rows and positions
    // (L, A): head h's mean output is [h*hs, (h+1)*hs) of a block's row.
    struct FixedEval {
        double loss = 0;
        std::vector<double> by_position;  // (T,)
        std::vector<double> head_means;   // (L, A)
    };
    FixedEval evaluate_fixed(int batches, uint64_t seed, bool by_position, bool head_means);
    // Samples n characters (tokens) after `prompt` (empty: a newline, the lecture's zero token), seeded; ids, when
    // given, receives the ids sampled (the text is their decode).
    std::string generate(const std::string& prompt, int n_chars, float temperature, int top_k, uint64_t seed,
                         std::vector<uint32_t>* ids = nullptr);
    // Asked between the batches of estimate_loss (and a big model's submits within one) and the characters of
    // generate (long on a CPU for big models):
    // true makes them throw Interrupted (Ctrl+C in the terminal). Empty: never.
    void set_stop_check(std::function<bool()> stop) { m_stop = std::move(stop); }

    // Attention weights of batch element display_batch() in the last training step, every layer and head:
    // (n_layer, NH, T, T), kept on the GPU (the step copies them there), masked entries exactly 0.
    const Buffer& attention_buffer() const { return m_att_display; }
    std::vector<float> read_attention() const;
    // Fills those weights without a step: a forward pass (no dropout, weights unchanged) on the batch the next step
    // would draw, which also becomes last_batch_tokens' batch; the step's random state does not move. For a map to
    // show before any step: after a build, a load, a reset or a revert. False if the stop check stopped it (the
    // weights then hold whatever part was written).
    bool preview_attention();
    int display_batch() const { return m_display_b; }
    void set_display_batch(int b);  // re-records the step
    // The input tokens (T,) of batch element b in the last training step (or the last preview).
    std::vector<uint32_t> last_batch_tokens(int b) const;

    // What the model makes of a probe text, tokens (P,) with 1 <= P <= block_size: one forward of that one sequence,
    // P positions long, at the current weights on the training kernels (no dropout; weights and random states
    // untouched; a new length records the forward again). Every layer x head's (P, P) attention, the loss
    // on each next character and the top-5 predictions at each position, as the time-lapse keeps them. logits, when
    // given, receives (P, V); att_f32, the attention before its fp16 storage, (L, NH, P, P). Throws attn::Error for
    // an empty or too long probe.
    ProbeSnapshot probe(const std::vector<uint32_t>& tokens, std::vector<float>* logits = nullptr,
                        std::vector<float>* att_f32 = nullptr);

    // The model's flat parameters (its layout, padding included), read back. write_params replaces them on the device
    // that probe and generate run on, and nowhere else (not the replicas' copies, not AdamW's moments): Session puts
    // a recorded step's weights there to compute a view, then the live ones back.
    std::vector<float> read_params();
    void write_params(const std::vector<float>& params);

    // Parameters, AdamW moments, step and RNG states: all a checkpoint needs to resume bit for bit.
    TrainerState export_state();
    // Restores a state saved from a Trainer with the same config and vocabulary (throws otherwise).
    void import_state(const TrainerState& s);

    // Per-kernel GPU times (a timestamp after every dispatch), for the profile view and bench: on, the step is
    // also recorded with timestamps, and a step after profile_next_step() runs that copy. Timestamps after
    // every dispatch cost lavapipe ~40% of a small model's step, so the window profiles about two steps a
    // second and headless --profile every step.
    void set_profiling(bool on);
    void profile_next_step() { m_profile_next = m_profiling; }
    // Whether the next step is a warm-up step (StepResult::warmup), unless that step re-records first (after two long
    // steps, note_step_time), when it is one too.
    bool warming_up() const { return m_since_record < k_warmup_steps; }
    // Submits per training step: 1, or more when the step is cut so that the window's frames run between
    // them (build_programs: big models on lavapipe; any device whose steps measure longer than
    // long_step_s, re-recorded with submits of about submit_s each). Tests shorten the limits.
    size_t step_submits() const;
    void set_submit_limits(double long_step_s, double submit_s) {
        m_long_step_s = long_step_s;
        m_submit_s = submit_s;
    }
    // The limits each new Trainer starts with (0.25 s and 0.05 s). The test suites start every trainer with limits
    // that never cut, so that a slow minute of a busy host cannot change what a test checks; the tests of cutting
    // set their own.
    static void set_default_submit_limits(double long_step_s, double submit_s) {
        s_default_long_step_s = long_step_s;
        s_default_submit_s = submit_s;
    }

    // The kernel times of the last profiled step (empty before one).
    // With replicas, those of the first replica's slice of the batch (the others run the same kernels at once).
    std::vector<std::pair<std::string, double>> last_kernel_times() const;

    // For tests: fix the batch offsets (B,) and run forward (+ backward) without an update.
    void set_batch(const std::vector<uint32_t>& offsets);
    float forward_loss();
    float forward_backward();
    void sample_batch(std::vector<uint32_t>& offsets, bool val);
    // The dropout key (uvec2) the last step used, for the CPU twin in tests.
    std::array<uint32_t, 2> dropout_key() const {
        auto* k = static_cast<const uint32_t*>(m_seed.mapped());
        return {k[0], k[1]};
    }

private:
    struct Shard;  // one replica: a device's slice of every training batch (replicas() > 1)
    void build_programs();
    void build_shards(const std::function<void()>& also_here = {});  // runs also_here while the replicas record
    void add_peers();
    StepResult step_replicated(bool profiled, bool warmup);
    double run_shards(int kind, bool profiled);
    void note_step_time(double wall);  // two steps in a row over m_long_step_s: re-record in shorter submits
    bool m_pending = false;  // replicas: the last step's update has not run yet (flush)
    int m_last_kind = 0;     // the Shard::Kind the last replicated step ran
    std::array<uint32_t, 2> slice_key(int slice) const;
    void record_step(Program& s);
    void record_profiled_step();
    void write_hyper(int t);  // AdamW's step t (from 1), and the dropout keys of step m_step
    Context& m_ctx;
    const Dataset& m_data;
    Config m_cfg;
    KernelCache m_kc;
    std::unique_ptr<Model> m_model;
    std::unique_ptr<Activations> m_act;
    // One-sequence forwards at the length they need, not the block's (GPT-2's block is 1024 tokens; a probe of 64
    // costs a sixteenth): the probe's at its own length P, generation's at the context's length rounded up to a
    // power of two (a causal mask hides the padding). Recorded when first needed, dropped by build_programs.
    struct Forward {
        std::unique_ptr<Activations> act;
        std::unique_ptr<Program> prog;
    };
    Forward& forward_at(int T, bool probe);  // the probe's (with its losses) or generation's forward of T positions
    Forward m_probe_fwd;
    std::vector<Forward> m_gen_fwd;  // by length: [k] holds 2^k positions (or the block size, the longest)
    Buffer m_tokens;        // (N,) whole corpus on the GPU
    Buffer m_offsets;       // (B,) host-visible: batch start positions
    Buffer m_eval_offsets;  // (B,)
    Buffer m_gen_tokens;    // (T+1,) host-visible: generation context
    Buffer m_gen_offsets;   // (1,) = 0
    Buffer m_hyper;         // ops::AdamWHyper, host-visible
    Buffer m_att_display;   // (n_layer, NH, T, T) copy of the last step's (or preview's) attention for element m_display_b
    Buffer m_seed;          // (uvec2,) host-visible: this step's dropout key
    std::unique_ptr<Program> m_step_prog, m_eval_prog, m_grad_prog, m_preview_prog;
    std::unique_ptr<Program> m_prof_prog;  // the step with a timestamp after every dispatch (profiling on)
    int m_replicas = 1;
    std::vector<std::unique_ptr<Shard>> m_shards;  // replicas() > 1: [0] on m_ctx (m_model), the others on their own
    double m_budget = 0;                   // submit budget of the step programs (see build_programs)
    double m_step_macs = 0;                // multiply-adds of a training step (about)
    double m_measured_budget = 0;          // the budget chosen after steps measured too long (0: none)
    static inline double s_default_long_step_s = KernelPolicy::k_long_step_s, s_default_submit_s = KernelPolicy::k_submit_s;
    double m_long_step_s = s_default_long_step_s, m_submit_s = s_default_submit_s;
    int m_long_steps = 0;                  // consecutive steps longer than m_long_step_s
    bool m_rerecord = false;               // re-record with m_measured_budget before the next step
    std::vector<uint32_t> m_last_offsets;
    Rng m_rng, m_eval_rng;
    std::function<bool()> m_stop;  // set_stop_check
    int m_step = 0;
    int m_display_b = 0;
    bool m_profiling = false;
    bool m_profile_next = false;
    static constexpr int k_warmup_steps = 2;  // with replicas the first update program runs in the second step
    int m_since_record = 0;                   // steps run since the programs were last recorded
};

}  // namespace attn
