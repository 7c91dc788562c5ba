// The terminal trainer: drives a Session and prints 'step N: train loss X, val loss Y' like the lecture, then a
// sample; a progress line on a terminal, --profile's report at the end. The run itself (schedule, history,
// checkpoints, metrics, faults) is the Session's (engine/train/session.h), shared with the window.
#include "headless.h"

#include <chrono>
#include <cstdio>
#include <unistd.h>

#include "interrupt.h"
#include "io/files.h"
#include "profile_report.h"
#include "terminal.h"

namespace attn {

namespace {
using clock = std::chrono::steady_clock;
double since(clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); }
}  // namespace

int run_headless(const RunOptions& o) {
    register_file("the checkpoint", o.save_path);  // what --metrics (or any other writer) must never overwrite
    register_file("the checkpoint", o.resume_path);
    Dataset data = Dataset::from_file(o.data_path, o.tokenizer);
    Checkpoint ck;
    Config c = o.cfg;
    if (!o.resume_path.empty()) {
        std::string note;
        ck = load_checkpoint(o.resume_path, &data.vocab(), &note);
        if (!note.empty()) std::fprintf(stderr, "attnlab: note: %s: %s\n", o.resume_path.c_str(), note.c_str());
        if (ck.tokenizer) data = Dataset::from_file(o.data_path, ck.tokenizer);  // the corpus in the run's own tokens
        c = resume_config(o, ck, data.vocab());
        // the checkpoint resumed may have brought files of its own (nanoGPT's meta.pkl): --save must not be one,
        // said now rather than at the first evaluation
        if (!o.save_path.empty())
            if (std::string why = write_problem(o.save_path, "the checkpoint"); !why.empty()) throw Error(why);
    }
    ContextOptions co;
    co.device_index = o.device;
    co.validation = o.validation;
    co.cpu_threads = cpu_threads_option(o, c, data.vocab_size());
    Context ctx(co);
    const bool resuming = !o.resume_path.empty();
    Session run(ctx, data, c, o.replicas, resuming ? &ck : nullptr);  // with its weights: no random init first
    Trainer& tr = run.trainer();
    run.set_history_budget(size_t(o.history_mib * 1048576.0));
    if (resuming) say_resumed(run, o.resume_path);
    if (!o.probe.empty()) say_note(run.set_probe(o.probe));
    if (o.profile) tr.set_profiling(true);
    print_run_header(ctx, data, c, tr);
    if (!o.metrics_path.empty()) run.write_metrics_to(o.metrics_path);
    run.set_fault(o.fault);

    const bool save = !o.save_path.empty();
    TerminalProgress progress;
    progress.tty = isatty(2) && !o.quiet;
    progress.step_line = clock::now();
    TerminalPrinter printer(ctx, tr, progress);  // the lecture's lines, as the run reports its evaluations
    run.set_events(&printer);
    ProfileReport prof;
    const auto t_run = clock::now();
    // Ctrl+C / kill / a closed terminal: finish the step (or evaluation batch) under way, save (--save), say where, exit
    // 128 + signal; evaluations and the sample stop too, between batches and characters
    install_interrupt_handlers(save ? ("stopping after the batch under way to save " + o.save_path).c_str()
                                    : "stopping after the batch under way");
    tr.set_stop_check([&] { return progress.stop_check(); });
    auto stopped = [&] {  // save the step reached, say so; the exit code
        int sig = interrupt_signal(), it = run.step_count();
        progress.show(nullptr, 0);
        if (save && run.saved_step() != it) run.save(o.save_path);  // the evaluation just before may have saved it
        if (save)
            std::printf("attnlab: stopped at step %d by %s; saved to %s (--resume %s continues)\n", it,
                        interrupt_name(sig), o.save_path.c_str(), o.save_path.c_str());
        else
            std::printf("attnlab: stopped at step %d by %s; nothing saved (--save FILE keeps checkpoints)\n", it,
                        interrupt_name(sig));
        std::fflush(stdout);
        return 128 + sig;
    };
    while (run.step_count() <= c.max_iters) {
        if (interrupt_signal()) return stopped();
        if (run.evaluation_due()) {
            try {
                progress.show("estimating the loss: batch", 2 * c.eval_iters);
                auto te = clock::now();
                run.evaluate([&](int done, int) { progress.done = done; });  // printer prints its line
                prof.add_eval(since(te));
            } catch (const Interrupted&) {
                return stopped();
            }
            if (save) run.save(o.save_path);
            if (!run.metrics_error().empty())  // rows the user asked for are not where they expect them
                throw Error(run.metrics_error() + (save ? "; the run is saved to " + o.save_path + " (--resume " +
                                                              o.save_path + " continues)"
                                                        : std::string()));
        }
        if (run.at_max_iters()) break;
        if (interrupt_signal()) return stopped();  // during the evaluation or its save: no step more
        SessionStep s;
        try {
            if (o.profile) tr.profile_next_step();  // --profile: every step
            s = run.step();
        } catch (const DeviceError& e) {  // the device's memory is gone: nothing more can be read back
            std::string ck = std::to_string(run.saved_step()) + " is in " + o.save_path + ": --resume " + o.save_path;
            throw Error(e.what() + (run.saved_step() >= 0 ? "; the checkpoint of step " + ck + " continues"
                                                           : std::string("; use --save FILE to keep checkpoints")));
        }
        prof.add_step(tr, s.result, s.seconds);
        if (!s.result.finite) {
            char lr[32];
            std::snprintf(lr, sizeof lr, "%g", c.lr);
            std::string ck = std::to_string(run.saved_step()) + " in " + o.save_path + " is from before: --resume " +
                             o.save_path + " --lr LOWER continues it";
            throw Error("training diverged at step " + std::to_string(run.step_count()) +
                        " (the loss is NaN or Inf): lower --lr (now " + lr + ")" +
                        (run.saved_step() >= 0 ? "; the checkpoint of step " + ck : ""));
        }
        progress.step_line_now(run, s.result);
    }
    if (interrupt_signal()) return stopped();  // after the last step: saved, nothing more to do
    // --profile's report comes after the sample, so that its share of the time is known (a sample cut short too)
    auto report = [&] {
        if (o.profile && prof.any()) prof.print(since(t_run), ctx.allocated_bytes() + tr.replica_bytes(), run.timelapse(),
                                           run.recording_seconds());
    };
    if (c.sample_chars > 0) {
        set_interrupt_message(save ? ("training is over and saved to " + o.save_path + ": stopping the sample").c_str()
                                   : "training is over: stopping the sample");
        std::printf("--- sample (%d %s, temperature %.2f%s) ---\n", c.sample_chars, data.bpe() ? "tokens" : "characters",
                    c.temperature,
                    c.top_k ? (", top-k " + std::to_string(c.top_k)).c_str() : "");
        std::fflush(stdout);
        auto ts = clock::now();
        try {
            progress.show("sampling: character", c.sample_chars, true);
            std::string text = run.sample("", c.sample_chars, c.seed).text;
            prof.add_sample(since(ts));
            progress.show(nullptr, 0);
            std::printf("%s\n", text.c_str());
        } catch (const Interrupted& e) {  // training is over and saved: only the sample is cut short
            prof.add_sample(since(ts));
            progress.show(nullptr, 0);
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
