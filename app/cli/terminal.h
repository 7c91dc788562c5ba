// What the terminal trainer (headless.cpp) prints besides the lecture's lines: the run's header, the progress of a
// long evaluation or sample on stderr (also the stop check for Ctrl+C), and where a failed run's checkpoint is.
#pragma once
#include <chrono>
#include <cstdio>
#include <string>

#include "train/session.h"

namespace attn {

// "corpus: ... | preset ...: ... | N parameters", the replicas line, the heavy-model and slow-width notes.
void print_run_header(const Context& ctx, const Dataset& data, const Config& c, const Trainer& tr);
// For a Session built from a checkpoint: "resumed FILE at step N" and what there is to say about it (nothing left to
// train, no time-lapse in the file).
void say_resumed(const Session& run, const std::string& path);
// "attnlab: NOTE" on stdout, unless the note is empty.
void say_note(const std::string& note);
// The lecture's "step N: train loss X, val loss Y", with the speed since the evaluation before when there is one.
void print_eval_line(const Context& ctx, const Trainer& tr, const SessionEval& e);

// The progress shown on stderr while a long evaluation or sample runs (after a quarter of a second), and the line of
// training steps; stop_check is the Trainer's stop check (true once a signal came).
struct TerminalProgress {
    using clock = std::chrono::steady_clock;
    bool tty = false;            // stderr is a terminal and not --quiet
    const char* what = nullptr;  // "estimating the loss: batch", "sampling: character"; nullptr: nothing shown
    int done = 0, total = 0;
    bool by_calls = false;  // done counts the stop check's calls (one a character); else estimate_loss sets it
    clock::time_point shown{}, step_line{};
    void show(const char* w, int n, bool calls = false);  // nullptr: clear the line
    bool stop_check();
    void step_line_now(const Session& run, const StepResult& r);  // at most every quarter of a second
};

// The run's events as the terminal shows them: each evaluation's line, after the progress line is cleared.
struct TerminalPrinter : SessionEvents {
    const Context& ctx;
    const Trainer& tr;
    TerminalProgress& progress;
    TerminalPrinter(const Context& c, const Trainer& t, TerminalProgress& p) : ctx(c), tr(t), progress(p) {}
    void evaluated(const SessionEval& e) override {
        progress.show(nullptr, 0);
        print_eval_line(ctx, tr, e);
    }
    // --save: one line a write, as the window says it (a run that never says it saved looks as if it did not)
    void checkpoint_written(const std::string& path, int step) override {
        progress.show(nullptr, 0);
        std::printf("attnlab: saved step %d to %s\n", step, path.c_str());
        std::fflush(stdout);
    }
};

}  // namespace attn
