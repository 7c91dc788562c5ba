// Benchmark: what recording the attention time-lapse costs training. Each preset trains STEPS steps with its
// evaluations, as `attnlab --headless` does (Session), and the time spent recording snapshots (Session::
// recording_seconds) is set against the whole run's; prints the throughput ratio with / without recording. Then
// what bf16 storage would change: at every recorded step, the probe's attention from the step's weights rounded to
// bf16 against the fp32 ones; prints the largest difference of one attention weight over every step, head and row.
// Usage: attn_bench_timelapse [CORPUS] [STEPS]   (gpt too with ATTN_BENCH_GPT=N: N steps, 20 if N is not a number)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "train/session.h"

using namespace attn;

// The largest |a_bf16 - a_fp32| of one attention weight of the time-lapse's probe over its recorded steps.
static double bf16_max_difference(Session& run) {
    const TimeLapse& tl = run.timelapse();
    Trainer& tr = run.trainer();
    std::vector<float> live = tr.read_params();
    double worst = 0;
    for (size_t i = 0; i < tl.snapshots().size(); i++) {
        if (tl.weights(i).empty()) continue;
        RecordedWeights w = tl.weights(i);
        tr.write_params(w.values());
        ProbeSnapshot full = tr.probe(tl.tokens());
        w.to_bf16();
        tr.write_params(w.values());
        ProbeSnapshot half = tr.probe(tl.tokens());
        for (size_t k = 0; k < full.att.size(); k++)
            worst = std::max(worst, double(std::fabs(half_to_float(half.att[k]) - half_to_float(full.att[k]))));
    }
    tr.write_params(live);
    return worst;
}

int main(int argc, char** argv) {
    std::string corpus = argc > 1 ? argv[1] : "assets/tinyshakespeare.txt";
    int steps = argc > 2 ? std::atoi(argv[2]) : 2000;
    try {
        Dataset data = Dataset::from_file(corpus);
        std::printf("%-12s %7s %10s %12s %12s %16s %14s\n", "preset", "steps", "snapshots", "run s", "recording s",
                    "throughput ratio", "bf16 max diff");
        for (const char* preset : {"single-head", "multi-head", "layernorm", "gpt"}) {
            Config c;
            c.apply_preset(preset);
            int n = steps;
            if (std::string(preset) == "gpt") {
                if (!std::getenv("ATTN_BENCH_GPT")) {
                    std::printf("%-12s (skipped: minutes a step on a CPU driver; set ATTN_BENCH_GPT=1)\n", preset);
                    continue;
                }
                n = std::atoi(std::getenv("ATTN_BENCH_GPT")) > 1 ? std::atoi(std::getenv("ATTN_BENCH_GPT")) : 20;
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
            std::printf("%-12s %7d %10zu %12.2f %12.3f %16.4f %14.6f\n", preset, n, run.timelapse().snapshots().size(),
                        wall, rec, (wall - rec) / wall, bf16_max_difference(run));
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
