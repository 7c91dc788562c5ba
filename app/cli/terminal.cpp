// The terminal trainer's header, evaluation lines and progress (terminal.h).
#include "terminal.h"

#include <cstdio>

#include "interrupt.h"
#include "text/bpe.h"

namespace attn {

void print_run_header(const Context& ctx, const Dataset& data, const Config& c, const Trainer& tr) {
    std::printf("corpus: %s (%zu bytes, vocab %d) | preset %s%s: %s | %zu parameters\n", data.name().c_str(), data.bytes(),
                data.vocab_size(), c.preset.c_str(), c.differs_from_preset() ? " (switches changed)" : "",
                c.describe().c_str(), tr.num_params());
    if (const auto& bpe = data.bpe())
        std::printf("tokens: byte-level BPE, %d ids (%d merges), %zu tokens, %.2f characters a token; the losses are "
                    "per token (per character: divided by %.2f)\n", bpe->vocab_size(), bpe->n_merges(),
                    data.tokens().size(), data.chars_per_token(), data.chars_per_token());
    if (tr.replicas() > 1)
        std::printf("replicas: each step split over %d devices of %s, a slice of the batch each, the gradients averaged "
                    "before AdamW (--replicas 1 for one)\n", tr.replicas(), ctx.device_name().c_str());
    std::fflush(stdout);
    if (std::string note = Trainer::heavy_note(ctx, c, data.vocab_size()); !note.empty())
        std::fprintf(stderr, "note: %s\n", note.c_str());
    if (std::string note = c.speed_note(); !note.empty()) std::fprintf(stderr, "note: %s\n", note.c_str());
}

void say_resumed(const Session& run, const std::string& path) {
    const std::string& note = run.resume_note();
    int step = run.step_count(), max_iters = run.config().max_iters;
    std::printf("resumed %s at step %d\n", path.c_str(), step);
    if (step >= max_iters)
        std::fprintf(stderr, "attnlab: nothing to train: the checkpoint is at step %d and --max-iters is %d (it counts "
                             "from step 0: give a larger one to train on)\n", step, max_iters);
    say_note(note);
}

void say_note(const std::string& note) {
    if (note.empty()) return;
    std::printf("attnlab: %s\n", note.c_str());
    std::fflush(stdout);
}

void print_eval_line(const Context& ctx, const Trainer& tr, const SessionEval& e) {
    std::printf("step %d: train loss %.4f, val loss %.4f", e.eval.step, e.eval.train, e.eval.val);
    if (tr.dataset().bpe()) std::printf(" (%.4f a character)", e.eval.val / tr.dataset().chars_per_token());
    if (e.eval.tps > 0)
        std::printf(" | %.0f tokens/s, %.2f ms/step, GPU memory %.1f MiB", e.eval.tps, e.ms_per_step,
                    (ctx.allocated_bytes() + tr.replica_bytes()) / 1048576.0);
    if (float norm = tr.last_grad_norm(); norm >= 0) std::printf(" | grad norm %.3f", norm);  // clipping on
    std::printf("\n");
    std::fflush(stdout);
}

void TerminalProgress::show(const char* w, int n, bool calls) {
    what = w, done = 0, total = n, by_calls = calls, shown = clock::now();
    if (!w && tty) std::fprintf(stderr, "\r\033[K");
}

bool TerminalProgress::stop_check() {
    if (tty && what && clock::now() - shown > std::chrono::milliseconds(250)) {
        shown = clock::now();
        std::fprintf(stderr, "\r\033[K%s %d/%d", what, done, total);
    }
    if (by_calls) done++;
    return interrupt_signal() != 0;
}

void TerminalProgress::step_line_now(const Session& run, const StepResult& r) {
    if (!tty || clock::now() - step_line < std::chrono::milliseconds(250)) return;
    step_line = clock::now();
    std::fprintf(stderr, "\r\033[Kstep %d/%d  loss %.4f  %.2f ms/step (GPU %.2f ms)", run.step_count(),
                 run.config().max_iters, r.loss, run.ms_per_step_since_eval(), r.gpu_ms);
    if (r.grad_norm >= 0) std::fprintf(stderr, "  grad norm %.3f", r.grad_norm);
}

}  // namespace attn
