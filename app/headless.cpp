// The terminal trainer: prints 'step N: train loss X, val loss Y' like the lecture, then a sample.
// Checkpoints with --save / --resume, a per-kernel profile with --profile.
#include "headless.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <unistd.h>

#include "interrupt.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

namespace attn {

// The model-shape flags: given with --resume, they must match the checkpoint.
static bool asks_model(const RunOptions& o) {
    for (const char* f : {"--preset", "--block-size", "--n-embd", "--head-size", "--n-head", "--n-layer", "--ffn",
                          "--residual", "--layernorm", "--no-pos"})
        if (o.given.count(f)) return true;
    return false;
}

// With --resume: the checkpoint's config, with the live settings the user typed on top.
static Config resumed_config(const RunOptions& o, const Config& saved) {
    Config c = saved;
    const Config& a = o.cfg;
    if (o.given.count("--batch-size")) c.batch_size = a.batch_size;
    if (o.given.count("--lr")) c.lr = a.lr;
    if (o.given.count("--weight-decay")) c.weight_decay = a.weight_decay;
    if (o.given.count("--max-iters")) c.max_iters = a.max_iters;
    if (o.given.count("--eval-interval")) c.eval_interval = a.eval_interval;
    if (o.given.count("--eval-iters")) c.eval_iters = a.eval_iters;
    if (o.given.count("--temperature")) c.temperature = a.temperature;
    if (o.given.count("--top-k")) c.top_k = a.top_k;
    if (o.given.count("--sample-chars")) c.sample_chars = a.sample_chars;
    if (o.given.count("--dropout")) c.dropout = a.dropout;
    if (o.given.count("--encoder")) c.causal = a.causal;
    return c;
}

// --profile's report, the Performance panel's figures as text: time per training step (wall, GPU, host), the shares of
// the run's wall time taken by training, evaluation and sampling, GPU memory, then GPU time per step by kernel.
struct ProfileTotals {
    double train_s = 0, eval_s = 0, sample_s = 0;  // wall time in each
    double gpu_ms = 0;                             // summed over the profiled steps (timestamps around each step)
    int steps = 0;                                 // training steps timed
};
static void print_profile(const std::map<std::string, std::pair<double, int>>& per_kernel, int steps,
                          const ProfileTotals& t, double wall_s, size_t gpu_bytes) {
    // called with steps > 0 (profiled steps are timed steps) and after them (wall_s > 0)
    double wall_ms = 1e3 * t.train_s / t.steps, gpu_ms = t.gpu_ms / steps;
    std::printf("--- time per training step (mean of %d steps) ---\n", t.steps);
    std::printf("wall %.3f ms | GPU %.3f ms | host %.3f ms (recording, submission, waiting, reading the loss)\n", wall_ms,
                gpu_ms, std::max(0.0, wall_ms - gpu_ms));
    std::printf("--- share of the run's %.2f s wall time ---\n", wall_s);
    std::printf("%-12s %6.1f%%\n%-12s %6.1f%%\n%-12s %6.1f%%\n", "training", 100 * t.train_s / wall_s, "evaluation",
                100 * t.eval_s / wall_s, "sampling", 100 * t.sample_s / wall_s);
    std::printf("GPU memory in use: %.1f MiB\n", gpu_bytes / 1048576.0);
    double total = 0;
    for (auto& [name, v] : per_kernel) total += v.first;
    std::vector<std::pair<std::string, std::pair<double, int>>> rows(per_kernel.begin(), per_kernel.end());
    std::sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.second.first > b.second.first; });
    std::printf("--- GPU time per step by kernel (mean of %d profiled steps) ---\n", steps);
    std::printf("%-26s %10s %8s %7s\n", "kernel", "ms/step", "calls", "share");
    for (auto& [name, v] : rows)
        // calls a step, rounded: with replicas AdamW runs from the second step on (299 calls in 300 steps is 1 a step)
        std::printf("%-26s %10.3f %8ld %6.1f%%\n", name.c_str(), v.first / steps, std::lround(double(v.second) / steps),
                    100.0 * v.first / total);
    std::printf("%-26s %10.3f\n", "total", total / steps);
}

int run_headless(const RunOptions& o) {
    Dataset data = Dataset::from_file(o.data_path);
    Checkpoint ck;
    Config c = o.cfg;
    if (!o.resume_path.empty()) {
        ck = load_checkpoint(o.resume_path);
        // the model the user asked for: a --preset names one whole; single flags change the checkpoint's
        Config asked = o.given.count("--preset") ? o.cfg : ck.config;
        if (!o.given.count("--preset")) {
            const Config& a = o.cfg;
            if (o.given.count("--block-size")) asked.block_size = a.block_size;
            if (o.given.count("--n-embd")) asked.n_embd = a.n_embd;
            if (o.given.count("--head-size")) asked.head_size = a.head_size;
            if (o.given.count("--n-head")) asked.n_head = a.n_head;
            if (o.given.count("--n-layer")) asked.n_layer = a.n_layer;
            if (o.given.count("--ffn")) asked.ffn = a.ffn;
            if (o.given.count("--residual")) asked.residual = a.residual;
            if (o.given.count("--layernorm")) asked.layernorm = a.layernorm;
            if (o.given.count("--no-pos")) asked.use_pos = a.use_pos;
        }
        check_resumable(ck, data.vocab(), asks_model(o) ? &asked : nullptr, &o.given);
        if (o.given.count("--seed"))  // the checkpoint carries its own random state: a seed would change nothing
            std::fprintf(stderr, "attnlab: note: --seed is ignored with --resume (the run continues from its saved "
                                 "random state)\n");
        c = resumed_config(o, ck.config);
        auto errs = validate(c);
        if (!errs.empty()) throw Error(errs.front().message);
    }
    ContextOptions co;
    co.device_index = o.device;
    co.validation = o.validation;
    co.cpu_threads = cpu_threads_option(o, c, data.vocab_size());
    Context ctx(co);
    Trainer tr(ctx, data, c, o.replicas);
    RunHistory history;
    if (!o.resume_path.empty()) {
        tr.import_state(ck.state);
        history = ck.history;
        std::printf("resumed %s at step %d\n", o.resume_path.c_str(), tr.step_count());
        if (tr.step_count() >= c.max_iters)
            std::fprintf(stderr, "attnlab: nothing to train: the checkpoint is at step %d and --max-iters is %d (it counts "
                                 "from step 0: give a larger one to train on)\n", tr.step_count(), c.max_iters);
    }
    if (o.profile) tr.set_profiling(true);
    std::printf("corpus: %s (%zu bytes, vocab %d) | preset %s%s: %s | %zu parameters\n", data.name().c_str(), data.bytes(),
                data.vocab_size(), c.preset.c_str(), c.differs_from_preset() ? " (switches changed)" : "",
                c.describe().c_str(), tr.num_params());
    if (tr.replicas() > 1)
        std::printf("replicas: each step split over %d devices of %s, a slice of the batch each, the gradients averaged "
                    "before AdamW (--replicas 1 for one)\n", tr.replicas(), ctx.device_name().c_str());
    std::fflush(stdout);
    if (std::string note = Trainer::heavy_note(ctx, c, data.vocab_size()); !note.empty())
        std::fprintf(stderr, "note: %s\n", note.c_str());
    std::ofstream metrics;
    if (!o.metrics_path.empty()) {
        metrics.open(o.metrics_path);
        if (!metrics) throw Error("cannot write --metrics file '" + o.metrics_path + "': check the folder exists and is writable");
        metrics << "step,train_loss,val_loss,tokens_per_s\n";
        // resumed: the run's earlier evaluations first (from the checkpoint, with the speed measured then; empty where
        // a checkpoint did not keep it), so the file holds the whole run like the window's does, not just this part
        for (const auto& e : history.evals) {
            metrics << e.step << ',' << e.train << ',' << e.val << ',';
            if (e.tps >= 0) metrics << e.tps;
            metrics << '\n';
        }
    }
    auto save = [&] {
        if (o.save_path.empty()) return;
        save_checkpoint(o.save_path, {tr.config(), data.vocab(), data.name(), tr.export_state(), history},
                        tr.model().params_info());
    };
    bool tty = isatty(2) && !o.quiet;
    using clock = std::chrono::steady_clock;
    auto t_progress = clock::now();
    double train_seconds = 0, last_tps = 0;
    long tokens_since = 0, steps_since = 0;
    std::map<std::string, std::pair<double, int>> per_kernel;
    int profiled = 0;
    ProfileTotals prof;
    const auto t_run = clock::now();
    int last_saved = -1;
    auto save_tracked = [&] {
        save();
        if (!o.save_path.empty()) last_saved = tr.step_count();
    };
    FaultInjection fault = o.fault;
    const int start = tr.step_count();
    // a resumed run already evaluated its first step before saving: repeating it would shift the eval batches
    bool evaluated_start = !history.evals.empty() && history.evals.back().step == start;
    // Ctrl+C / kill / a closed terminal: finish the step (or evaluation batch) under way, save (--save), say where, exit
    // 128 + signal
    install_interrupt_handlers(o.save_path.empty() ? "stopping after the batch under way"
                                                   : ("stopping after the batch under way to save " + o.save_path).c_str());
    // evaluations and the sample stop too (between batches and a big model's submits, between characters: long for
    // big models on a CPU); the same hook shows their progress on a terminal
    struct {
        const char* what = nullptr;  // "estimating the loss: batch", "sampling: character"; nullptr: nothing shown
        int done = 0, total = 0;
        bool by_calls = false;  // done counts the stop check's calls (one a character); else estimate_loss sets it
        clock::time_point shown{};
    } progress;
    tr.set_stop_check([&] {
        if (tty && progress.what && clock::now() - progress.shown > std::chrono::milliseconds(250)) {
            progress.shown = clock::now();
            std::fprintf(stderr, "\r\033[K%s %d/%d", progress.what, progress.done, progress.total);
        }
        if (progress.by_calls) progress.done++;
        return interrupt_signal() != 0;
    });
    auto show_progress = [&](const char* what, int total, bool by_calls = false) {
        progress = {what, 0, total, by_calls, clock::now()};  // shown once it has taken a quarter of a second
        if (!what && tty) std::fprintf(stderr, "\r\033[K");
    };
    auto stopped = [&](int it) {  // save the step reached, say so; the exit code
        int sig = interrupt_signal();
        if (tty) std::fprintf(stderr, "\r\033[K");
        if (last_saved != it) save_tracked();  // not twice: the evaluation just before may have saved this step
        if (o.save_path.empty())
            std::printf("attnlab: stopped at step %d by %s; nothing saved (--save FILE keeps checkpoints)\n", it,
                        interrupt_name(sig));
        else
            std::printf("attnlab: stopped at step %d by %s; saved to %s (--resume %s continues)\n", it,
                        interrupt_name(sig), o.save_path.c_str(), o.save_path.c_str());
        std::fflush(stdout);
        return 128 + sig;
    };
    for (int it = start; it <= c.max_iters; it++) {
        if (interrupt_signal()) return stopped(it);
        if ((it % c.eval_interval == 0 || it == c.max_iters) && !(it == start && evaluated_start)) {
            if (tty) std::fprintf(stderr, "\r\033[K");
            EvalResult e;
            try {
                show_progress("estimating the loss: batch", 2 * c.eval_iters);
                auto te = clock::now();
                e = tr.estimate_loss([&](int done, int) { progress.done = done; });
                prof.eval_s += std::chrono::duration<double>(clock::now() - te).count();
                show_progress(nullptr, 0);
            } catch (const Interrupted&) {
                return stopped(it);
            }
            if (tokens_since > 0 && train_seconds > 0) last_tps = tokens_since / train_seconds;
            std::printf("step %d: train loss %.4f, val loss %.4f", it, e.train, e.val);
            if (last_tps > 0)
                std::printf(" | %.0f tokens/s, %.2f ms/step, GPU memory %.1f MiB", last_tps, 1e3 * train_seconds / steps_since,
                            (ctx.allocated_bytes() + tr.replica_bytes()) / 1048576.0);
            std::printf("\n");
            std::fflush(stdout);
            history.evals.push_back({it, e.train, e.val, last_tps});
            if (metrics) metrics << it << ',' << e.train << ',' << e.val << ',' << last_tps << '\n' << std::flush;
            tokens_since = steps_since = 0;
            train_seconds = 0;
            save_tracked();
        }
        if (it == c.max_iters) break;
        if (interrupt_signal()) return stopped(it);  // during the evaluation or its save: no step more
        auto t0 = clock::now();
        StepResult r;
        try {
            inject_fault(tr, fault);  // --inject-fault (tests): nothing unless this is its step
            if (o.profile) tr.profile_next_step();  // --profile: every step
            r = tr.step();
        } catch (const DeviceError& e) {
            // the device's memory is gone: nothing more can be read back, but the last checkpoint is safe
            throw Error(std::string(e.what()) + (last_saved >= 0 ? "; the checkpoint of step " + std::to_string(last_saved) +
                                                                       " is in " + o.save_path + ": --resume " +
                                                                       o.save_path + " continues"
                                                                 : "; use --save FILE to keep checkpoints"));
        }
        auto t1 = clock::now();
        double step_s = std::chrono::duration<double>(t1 - t0).count();
        train_seconds += step_s;  // since the last evaluation (its tokens/s)
        prof.train_s += step_s;   // the whole run (--profile)
        prof.steps++;
        tokens_since += long(c.batch_size) * c.block_size;
        steps_since++;
        history.step_losses.push_back(r.loss);
        if (!r.finite) {
            char lr[32];
            std::snprintf(lr, sizeof lr, "%g", c.lr);
            throw Error("training diverged at step " + std::to_string(it + 1) + " (the loss is NaN or Inf): lower --lr (now " +
                        lr + ")" +
                        (last_saved < 0 ? ""
                                        : "; the checkpoint of step " + std::to_string(last_saved) + " in " + o.save_path +
                                              " is from before: --resume " + o.save_path + " --lr LOWER continues it"));
        }
        if (r.profiled) {
            for (auto& [name, ms] : tr.last_kernel_times()) {
                per_kernel[name].first += ms;
                per_kernel[name].second++;
            }
            profiled++;
            prof.gpu_ms += r.gpu_ms;
        }
        if (tty && std::chrono::duration<double>(t1 - t_progress).count() > 0.25) {
            t_progress = t1;
            std::fprintf(stderr, "\r\033[Kstep %d/%d  loss %.4f  %.2f ms/step (GPU %.2f ms)", it + 1, c.max_iters, r.loss,
                         1e3 * train_seconds / steps_since, r.gpu_ms);
        }
    }
    if (interrupt_signal()) return stopped(tr.step_count());  // after the last step: saved, nothing more to do
    // --profile's report comes after the sample, so that its share of the time is known (a sample cut short too)
    auto report = [&] {
        if (o.profile && profiled > 0)
            print_profile(per_kernel, profiled, prof, std::chrono::duration<double>(clock::now() - t_run).count(),
                          ctx.allocated_bytes() + tr.replica_bytes());
    };
    if (c.sample_chars > 0) {
        set_interrupt_message(o.save_path.empty() ? "training is over: stopping the sample"
                                                  : ("training is over and saved to " + o.save_path + ": stopping the sample").c_str());
        std::printf("--- sample (%d characters, temperature %.2f%s) ---\n", c.sample_chars, c.temperature,
                    c.top_k ? (", top-k " + std::to_string(c.top_k)).c_str() : "");
        std::fflush(stdout);
        auto ts = clock::now();
        try {
            show_progress("sampling: character", c.sample_chars, true);
            std::string text = tr.generate("", c.sample_chars, c.temperature, c.top_k, c.seed);
            prof.sample_s += std::chrono::duration<double>(clock::now() - ts).count();
            show_progress(nullptr, 0);
            std::printf("%s\n", text.c_str());
        } catch (const Interrupted& e) {  // training is over and saved: only the sample is cut short
            prof.sample_s += std::chrono::duration<double>(clock::now() - ts).count();
            show_progress(nullptr, 0);
            std::printf("%s\n", e.text.c_str());  // what was sampled before the stop
            std::vector<uint32_t> chars;
            decode_utf8(e.text, chars, nullptr);
            std::printf("attnlab: sample stopped by %s after %zu characters\n", interrupt_name(interrupt_signal()),
                        chars.size());
            report();
            return 128 + interrupt_signal();
        }
    }
    report();
    if (ctx.validation_enabled() && ctx.validation_messages() > 0) {
        std::fprintf(stderr, "validation: %llu message(s)\n", (unsigned long long)ctx.validation_messages());
        return 3;
    }
    return 0;
}

}  // namespace attn
