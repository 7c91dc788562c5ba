// The terminal trainer: prints 'step N: train loss X, val loss Y' like the lecture, then a sample.
#include "headless.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <unistd.h>

#include "train/trainer.h"

namespace attn {

int run_headless(const RunOptions& o) {
    Dataset data = Dataset::from_file(o.data_path);
    ContextOptions co;
    co.device_index = o.device;
    co.validation = o.validation;
    Context ctx(co);
    const Config& c = o.cfg;
    Trainer tr(ctx, data, c);
    std::printf("corpus: %s (%zu bytes, vocab %d) | preset %s | %zu parameters\n", data.name().c_str(), data.bytes(),
                data.vocab_size(), c.preset.c_str(), tr.num_params());
    std::fflush(stdout);
    std::ofstream metrics;
    if (!o.metrics_path.empty()) {
        metrics.open(o.metrics_path);
        if (!metrics) throw Error("cannot write --metrics file '" + o.metrics_path + "': check the folder exists and is writable");
        metrics << "step,train_loss,val_loss,tokens_per_s\n";
    }
    bool tty = isatty(2) && !o.quiet;
    using clock = std::chrono::steady_clock;
    auto t_last = clock::now(), t_progress = clock::now();
    double train_seconds = 0;
    long tokens_since = 0;
    double last_tps = 0;
    for (int it = 0; it <= c.max_iters; it++) {
        if (it % c.eval_interval == 0 || it == c.max_iters) {
            if (tty) std::fprintf(stderr, "\r\033[K");
            EvalResult e = tr.estimate_loss();
            if (tokens_since > 0) last_tps = tokens_since / train_seconds;
            std::printf("step %d: train loss %.4f, val loss %.4f", it, e.train, e.val);
            if (last_tps > 0) std::printf(" | %.0f tokens/s", last_tps);
            std::printf("\n");
            std::fflush(stdout);
            if (metrics) metrics << it << ',' << e.train << ',' << e.val << ',' << last_tps << '\n' << std::flush;
            tokens_since = 0;
            train_seconds = 0;
        }
        if (it == c.max_iters) break;
        auto t0 = clock::now();
        StepResult r = tr.step();
        auto t1 = clock::now();
        train_seconds += std::chrono::duration<double>(t1 - t0).count();
        tokens_since += long(c.batch_size) * c.block_size;
        if (!r.finite)
            throw Error("training diverged at step " + std::to_string(it) + " (the loss is NaN or Inf): lower --lr (now " +
                        std::to_string(c.lr) + ")");
        if (tty && std::chrono::duration<double>(t1 - t_progress).count() > 0.25) {
            t_progress = t1;
            std::fprintf(stderr, "\r\033[Kstep %d/%d  loss %.4f  %.2f ms/step (GPU %.2f ms)", it + 1, c.max_iters, r.loss,
                         1e3 * train_seconds / std::max<long>(1, tokens_since / (long(c.batch_size) * c.block_size)), r.gpu_ms);
        }
    }
    (void)t_last;
    if (c.sample_chars > 0) {
        std::printf("--- sample (%d characters, temperature %.2f%s) ---\n", c.sample_chars, c.temperature,
                    c.top_k ? (", top-k " + std::to_string(c.top_k)).c_str() : "");
        std::printf("%s\n", tr.generate("", c.sample_chars, c.temperature, c.top_k, c.seed).c_str());
    }
    if (ctx.validation_enabled() && ctx.validation_messages() > 0) {
        std::fprintf(stderr, "validation: %llu message(s)\n", (unsigned long long)ctx.validation_messages());
        return 3;
    }
    return 0;
}

}  // namespace attn
