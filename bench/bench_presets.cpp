// Benchmark: step time and tokens/s of each preset on the current device (the gpt preset with ATTN_BENCH_GPT=1), and the ratio to PyTorch's
// figures measured on the same kind of machine (PyTorch 1.13, OpenBLAS, 1 thread; see README). Each preset trains as
// attnlab does by default: --cpu-threads auto and --replicas auto (the replicas column: devices a step is split over).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "train/trainer.h"

using namespace attn;

int main(int argc, char** argv) {
    std::string corpus = argc > 1 ? argv[1] : "assets/tinyshakespeare.txt";
    int steps = argc > 2 ? std::atoi(argv[2]) : 300;
    try {
        Dataset data = Dataset::from_file(corpus);
        // as attnlab's --cpu-threads auto: a CPU driver's thread count per model (a context per preset, as it is read
        // when the instance is created), unless LP_NUM_THREADS is set
        bool env_threads = std::getenv("LP_NUM_THREADS") != nullptr;
        int cores = int(std::max(1u, std::thread::hardware_concurrency()));
        // PyTorch it/s on this kind of machine (shared/README.md; gpt: 18.7 s a step, from the performance issue)
        struct Row { const char* preset; double torch_it_s; int steps; };
        const Row rows[] = {{"bigram", 970.0, steps},     {"single-head", 300.0, steps}, {"multi-head", 170.0, steps / 2},
                            {"feed-forward", 180.0, steps / 2}, {"residual", 63.0, steps / 4}, {"layernorm", 41.0, steps / 4},
                            {"gpt", 1.0 / 18.7, 2}};
        std::vector<std::string> rows_out;
        std::printf("%-12s %10s %10s %12s %12s %14s %8s %9s\n", "preset", "ms/step", "GPU ms", "it/s", "tokens/s",
                    "vs PyTorch", "threads", "replicas");
        for (const Row& r : rows) {
            Config c;
            c.apply_preset(r.preset);
            ContextOptions co;
            co.quiet = &r != rows;
            int threads = Trainer::cpu_threads_for(c, data.vocab_size());
            if (!env_threads) co.cpu_threads = threads == 1 ? 1 : cores;
            Context ctx(co);
            Trainer tr(ctx, data, c);
            if (std::string(r.preset) == "gpt" && !std::getenv("ATTN_BENCH_GPT")) {
                std::printf("%-12s (skipped: minutes a step on a CPU driver; set ATTN_BENCH_GPT=1)\n", r.preset);
                continue;
            }
            for (int i = 0; i < std::min(20, r.steps); i++) tr.step();  // warm-up: JIT and caches
            // the median of the steps whose GPU time was read back (Program::run: every 200 ms, a few a run, so
            // that one slow step would skew a mean)
            std::vector<double> gpus;
            auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < r.steps; i++) {
                StepResult sr = tr.step();
                if (sr.gpu_timed) gpus.push_back(sr.gpu_ms);
            }
            std::sort(gpus.begin(), gpus.end());
            double gpu = gpus.empty() ? 0.0 : gpus[gpus.size() / 2];
            double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            double it_s = r.steps / s;
            rows_out.push_back(r.preset);
            bool cpu = ctx.props().deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
            std::string th = !cpu ? "-" : env_threads ? "env" : std::to_string(co.cpu_threads);
            std::printf("%-12s %10.3f %10.3f %12.1f %12.0f %13.2fx %8s %9d\n", r.preset, 1e3 * s / r.steps, gpu,
                        it_s, it_s * c.batch_size * c.block_size, it_s / r.torch_it_s, th.c_str(), tr.replicas());
            if (std::getenv("ATTN_PROFILE")) {
                tr.set_profiling(true);
                for (int i = 0; i < 5; i++) {
                    tr.profile_next_step();
                    tr.step();
                }
                for (auto& [name, ms] : tr.last_kernel_times()) std::printf("    %-24s %8.3f ms\n", name.c_str(), ms);
            }
        }
    } catch (const Error& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    }
    return 0;
}
