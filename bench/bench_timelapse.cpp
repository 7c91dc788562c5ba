// Benchmark: what recording the attention time-lapse costs training. Each preset trains STEPS steps with its
// evaluations, as `attnlab --headless` does (Session), and the time spent recording snapshots (Session::
// recording_seconds) is set against the whole run's; prints the throughput ratio with / without recording.
// Usage: attn_bench_timelapse [CORPUS] [STEPS]   (gpt too with ATTN_BENCH_GPT=1)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "train/session.h"

using namespace attn;

int main(int argc, char** argv) {
    std::string corpus = argc > 1 ? argv[1] : "assets/tinyshakespeare.txt";
    int steps = argc > 2 ? std::atoi(argv[2]) : 2000;
    try {
        Dataset data = Dataset::from_file(corpus);
        std::printf("%-12s %7s %10s %12s %12s %16s\n", "preset", "steps", "snapshots", "run s", "recording s",
                    "throughput ratio");
        for (const char* preset : {"single-head", "multi-head", "layernorm", "gpt"}) {
            Config c;
            c.apply_preset(preset);
            int n = steps;
            if (std::string(preset) == "gpt") {
                if (!std::getenv("ATTN_BENCH_GPT")) {
                    std::printf("%-12s (skipped: minutes a step on a CPU driver; set ATTN_BENCH_GPT=1)\n", preset);
                    continue;
                }
                n = std::min(steps, 20);
            }
            c.max_iters = n;
            ContextOptions co;
            co.quiet = true;
            co.cpu_threads = Trainer::cpu_threads_for(c, data.vocab_size());
            Context ctx(co);
            Session run(ctx, data, c);
            auto t0 = std::chrono::steady_clock::now();
            while (run.step_count() <= n) {  // the headless loop: evaluations when due, then a step
                if (run.evaluation_due()) run.evaluate();
                if (run.at_max_iters()) break;
                run.step();
            }
            double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            double rec = run.recording_seconds();
            // throughput with recording over without: the same run less the time spent recording
            std::printf("%-12s %7d %10zu %12.2f %12.3f %16.4f\n", preset, n, run.timelapse().snapshots().size(), wall,
                        rec, (wall - rec) / wall);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
