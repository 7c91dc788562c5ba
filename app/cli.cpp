// Command-line flags -> RunOptions, with the preset applied first so flags override it.
#include "cli.h"

#include <CLI/CLI.hpp>
#include <cstdio>

namespace attn {

int parse_cli(int argc, char** argv, RunOptions& o) {
    // The preset decides the defaults, so find it before the other flags are applied.
    std::string preset = "single-head";
    for (int i = 1; i + 1 < argc; i++)
        if (std::string(argv[i]) == "--preset") preset = argv[i + 1];
    if (!o.cfg.apply_preset(preset)) {
        std::string names;
        for (auto& n : Config::preset_names()) names += (names.empty() ? "" : ", ") + n;
        std::fprintf(stderr, "error: unknown --preset '%s': choose one of %s\n", preset.c_str(), names.c_str());
        return 2;
    }
    Config& c = o.cfg;
    CLI::App app{"Attention Lab: watch a character-level GPT learn, trained by Vulkan compute shaders", "attnlab"};
    app.add_flag("--headless", o.headless, "train in the terminal, no window");
    app.add_option("--preset", preset, "model: bigram | single-head");
    app.add_option("--data", o.data_path, "UTF-8 text file to learn from (default: tiny Shakespeare)");
    app.add_option("--batch-size", c.batch_size, "sequences per step (B)");
    app.add_option("--block-size", c.block_size, "context length (T)");
    app.add_option("--n-embd", c.n_embd, "embedding width (C)");
    app.add_option("--head-size", c.head_size, "attention head size (HS)");
    app.add_option("--lr", c.lr, "AdamW learning rate");
    app.add_option("--weight-decay", c.weight_decay, "AdamW weight decay");
    app.add_option("--max-iters", c.max_iters, "training steps");
    app.add_option("--eval-interval", c.eval_interval, "steps between loss estimates");
    app.add_option("--eval-iters", c.eval_iters, "batches per split in each loss estimate");
    app.add_option("--seed", c.seed, "random seed (init, batches, sampling)");
    app.add_option("--temperature", c.temperature, "sampling temperature");
    app.add_option("--top-k", c.top_k, "sample only from the k likeliest characters (0: all)");
    app.add_option("--sample-chars", c.sample_chars, "characters generated at the end");
    app.add_option("--metrics", o.metrics_path, "write step,train_loss,val_loss,tokens_per_s to this CSV");
    app.add_option("--device", o.device, "Vulkan device index (see --list-devices)");
    app.add_flag("--list-devices", o.list_devices, "list Vulkan devices and exit");
    app.add_flag("--validation", o.validation, "enable the Khronos validation layer");
    app.add_flag("--quiet", o.quiet, "no progress line");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        std::printf("%s", app.help().c_str());
        return 0;
    } catch (const CLI::ParseError& e) {
        std::string msg = e.what();
        std::fprintf(stderr, "error: %s (see attnlab --help)\n", msg.c_str());
        return 2;
    }
    c.preset = preset;
    auto errs = validate(c);
    if (!errs.empty()) {
        std::fprintf(stderr, "error: %s\n", errs.front().message.c_str());
        return 2;
    }
    return -1;
}

}  // namespace attn
