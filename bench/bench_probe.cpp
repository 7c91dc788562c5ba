// Benchmark: what opening a big run and probing it costs (GPT-2 124M on lavapipe, issue "the models people actually
// train"). Loads a checkpoint (an imported GPT-2 or any run), builds its trainer with batch 1 as `attnlab inspect`
// does, then times one forward of a probe of N tokens (every head's attention, the losses and the top-5 predictions,
// Trainer::probe): the first (it records the probe's forward) and the median of the next runs. Prints the seconds
// and each against the 3-second target as a ratio, and the device memory the trainer holds.
// Usage: attn_bench_probe RUN.safetensors [TOKENS] [CORPUS]   (TOKENS 64; CORPUS: the run's, else tiny Shakespeare)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "train/session.h"

using namespace attn;

static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: attn_bench_probe RUN.safetensors [TOKENS] [CORPUS]\n");
        return 2;
    }
    int n = argc > 2 ? std::atoi(argv[2]) : 64;
    try {
        double t0 = now();
        Checkpoint ck = load_checkpoint(argv[1]);
        double t_load = now() - t0;
        std::string corpus = argc > 3 ? argv[3] : "assets/tinyshakespeare.txt";
        t0 = now();
        Dataset data = ck.tokenizer ? Dataset::from_file(corpus, ck.tokenizer) : Dataset::from_file(corpus);
        double t_data = now() - t0;
        Config c = ck.config;
        c.batch_size = 1;
        ContextOptions co;
        co.quiet = true;
        co.cpu_threads = Trainer::cpu_threads_for(c, data.vocab_size());
        Context ctx(co);
        t0 = now();
        Session run(ctx, data, c, 1, &ck);
        double t_build = now() - t0;
        Trainer& tr = run.trainer();
        n = std::clamp(n, 1, c.block_size);
        const auto& val = data.tokens();
        std::vector<uint32_t> probe(val.end() - n - 1, val.end() - 1);  // the corpus's last N tokens
        t0 = now();
        ProbeSnapshot first = tr.probe(probe);
        double t_first = now() - t0;
        std::vector<double> warm;
        for (int i = 0; i < 3; i++) {
            t0 = now();
            tr.probe(probe);
            warm.push_back(now() - t0);
        }
        std::sort(warm.begin(), warm.end());
        int L = tr.model().n_layer(), NH = tr.model().n_head();
        std::printf("%s on %s: %d layers x %d heads, %zu parameters, block %d, vocabulary %d\n", argv[1],
                    ctx.device_name().c_str(), L, NH, tr.num_params(), c.block_size, data.vocab_size());
        std::printf("load %.1f s, tokenize the corpus %.1f s, build the trainer %.1f s, device memory %.0f MiB\n",
                    t_load, t_data, t_build, double(ctx.allocated_bytes()) / (1 << 20));
        std::printf("%-28s %10s %18s\n", ("probe of " + std::to_string(n) + " tokens").c_str(), "seconds",
                    "ratio to 3 s");
        std::printf("%-28s %10.2f %18.2f\n", "first (records it)", t_first, t_first / 3.0);
        std::printf("%-28s %10.2f %18.2f\n", "median of 3 after", warm[1], warm[1] / 3.0);
        std::printf("probe: %d tokens, %zu attention maps, loss of the last %.3f\n", n, first.att.size() / (size_t(n) * n),
                    first.char_loss.empty() ? 0.0 : double(first.char_loss.back()));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
