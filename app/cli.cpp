// Command-line flags -> RunOptions, with the preset applied first so flags override it; and what --inject-fault does.
#include "cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <unistd.h>

#include "io/files.h"
#include "model/model.h"
#include "train/trainer.h"

namespace attn {

int cpu_threads_option(const RunOptions& o, const Config& cfg, int vocab_size) {
    if (o.cpu_threads > 0) return o.cpu_threads;
    if (cpu_driver_threads_set_by_user()) return 0;  // LP_NUM_THREADS as the user set it
    return Trainer::cpu_threads_for(cfg, vocab_size);
}

// "nan@150" -> {Nan, 150}; false when it is not KIND@STEP.
static bool parse_fault(const std::string& text, FaultInjection& f) {
    size_t at = text.find('@');
    if (at == std::string::npos) return false;
    std::string kind = text.substr(0, at), step = text.substr(at + 1);
    static const std::map<std::string, FaultInjection::Kind> kinds{{"nan", FaultInjection::Kind::Nan},
                                                                   {"oom", FaultInjection::Kind::OutOfMemory},
                                                                   {"device-lost", FaultInjection::Kind::DeviceLost}};
    auto k = kinds.find(kind);
    if (k == kinds.end() || step.empty() || step.size() > 9 ||
        !std::all_of(step.begin(), step.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return false;
    int n = std::stoi(step);
    if (n < 1 || n > 100000000) return false;
    f = {k->second, n, text};
    return true;
}

// The model-shape flags: given with --resume, they must match the checkpoint.
static bool asks_model(const RunOptions& o) {
    for (const char* f : {"--preset", "--block-size", "--n-embd", "--head-size", "--n-head", "--n-layer", "--ffn",
                          "--residual", "--layernorm", "--no-pos"})
        if (o.given.count(f)) return true;
    return false;
}

Config resume_config(const RunOptions& o, const Checkpoint& ck, const std::vector<uint32_t>& corpus_vocab) {
    const Config& a = o.cfg;
    // the model the user asked for: a --preset names one whole; single flags change the checkpoint's
    Config asked = o.given.count("--preset") ? a : ck.config;
    if (!o.given.count("--preset")) {
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
    check_resumable(ck, corpus_vocab, asks_model(o) ? &asked : nullptr, &o.given);
    if (o.given.count("--seed"))  // the checkpoint carries its own random state: a seed would change nothing
        std::fprintf(stderr, "attnlab: note: --seed is ignored with --resume (the run continues from its saved "
                             "random state)\n");
    // the checkpoint's config, with the live settings the user typed on top
    Config c = ck.config;
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
    auto errs = validate(c);
    if (!errs.empty()) throw Error(errs.front().message);
    return c;
}

// Why PATH cannot take an output file, or "" when it can. `renamed`: written beside the path and renamed over it
// (checkpoints): never over a device or pipe, and the folder must take the new file. Otherwise (--metrics,
// --screenshot) written in place: an existing file (or device: /dev/stdout) must be writable, a new one needs the folder.
static std::string output_path_problem(const std::string& path, bool renamed) {
    if (path.empty()) return "needs a file name";
    std::error_code ec;
    auto st = std::filesystem::status(path, ec);
    bool exists = !ec && std::filesystem::exists(st);
    if (exists && std::filesystem::is_directory(st)) return "'" + path + "' is a folder: name a file in it";
    if (exists && renamed && !std::filesystem::is_regular_file(st))
        return "'" + path + "' is not a regular file (a device or pipe): name a file";
    if (exists && !renamed) return ::access(path.c_str(), W_OK) == 0 ? "" : "'" + path + "' is not writable";
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = ".";
    if (!std::filesystem::is_directory(dir, ec)) return "'" + path + "': the folder " + dir.string() + " does not exist";
    if (::access(dir.c_str(), W_OK) != 0) return "'" + path + "': cannot write in the folder " + dir.string();
    return "";
}

std::string seed_problem(const std::string& v, uint64_t* value) {
    char* end = nullptr;
    errno = 0;
    unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    bool ok = !v.empty() && v[0] != '-' && *end == '\0' && errno == 0 && n <= (1ull << 53);
    if (ok && value) *value = n;
    return ok ? "" : "must be a whole number from 0 to 2^53 (got '" + v + "')";
}

std::string default_corpus_path() {
    const std::string here = "assets/tinyshakespeare.txt";
    std::error_code ec;
    if (std::filesystem::exists(here, ec)) return here;
    std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        std::filesystem::path beside = exe.parent_path().parent_path() / here;
        if (std::filesystem::exists(beside, ec)) return beside.string();
    }
    return here;
}

int parse_cli(int argc, char** argv, RunOptions& o) {
    // The preset decides the defaults, so find it before the other flags are applied.
    std::string preset = "single-head";
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--preset" && i + 1 < argc) preset = argv[++i];
        else if (a.rfind("--preset=", 0) == 0) preset = a.substr(9);
    }
    if (!o.cfg.apply_preset(preset)) {
        std::string names;
        for (auto& n : Config::preset_names()) names += (names.empty() ? "" : ", ") + n;
        std::fprintf(stderr, "error: unknown --preset '%s': choose one of %s\n", preset.c_str(), names.c_str());
        return 2;
    }
    Config& c = o.cfg;
    CLI::App app{"Attention Lab: watch a character-level GPT learn, trained by Vulkan compute shaders", "attnlab"};
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // a flag given twice: the last counts
    app.add_flag("--headless", o.headless, "train in the terminal, no window");
    std::string preset_help = "the lecture's stage:";
    for (auto& n : Config::preset_names()) preset_help += " " + n;
    app.add_option("--preset", preset, preset_help);
    app.add_option("--data", o.data_path, "UTF-8 text file to learn from (default: tiny Shakespeare)");
    app.add_option("--batch-size", c.batch_size, "sequences per step (B)");
    app.add_option("--block-size", c.block_size, "context length (T)");
    app.add_option("--n-embd", c.n_embd, "embedding width (C)");
    app.add_option("--head-size", c.head_size, "attention head size (HS); 0: n_embd / n_head");
    app.add_option("--n-head", c.n_head, "attention heads per layer (NH)");
    app.add_option("--n-layer", c.n_layer, "transformer blocks");
    // on | off (also 1 | 0, true | false) -> "1" | "0" for a bool
    CLI::Validator on_off(
        [](std::string& v) -> std::string {
            if (v == "on" || v == "1" || v == "true") return v = "1", "";
            if (v == "off" || v == "0" || v == "false") return v = "0", "";
            return "must be on or off (got '" + v + "')";
        },
        "", "on|off");
    app.add_option("--ffn", c.ffn, "feed-forward after attention: on | off")->transform(on_off)->type_name("on|off");
    app.add_option("--residual", c.residual, "residual connections + projections: on | off")
        ->transform(on_off)->type_name("on|off");
    app.add_option("--layernorm", c.layernorm, "pre-norm LayerNorm in each block and before lm_head: on | off")
        ->transform(on_off)->type_name("on|off");
    app.add_option("--dropout", c.dropout, "dropout probability (training only)");
    bool encoder = false, no_pos = false;
    app.add_flag("--encoder", encoder, "no causal mask: every position attends to every other (the lecture's encoder)");
    app.add_flag("--no-pos", no_pos, "no position embeddings (attention then has no notion of order)");
    app.add_option("--lr", c.lr, "AdamW learning rate");
    app.add_option("--weight-decay", c.weight_decay, "AdamW weight decay");
    app.add_option("--max-iters", c.max_iters, "training steps");
    app.add_option("--eval-interval", c.eval_interval, "steps between loss estimates");
    app.add_option("--eval-iters", c.eval_iters, "batches per split in each loss estimate");
    app.add_option("--seed", c.seed, "random seed (init, batches, sampling), 0 to 2^53")
        ->check(CLI::Validator([](std::string& v) { return seed_problem(v); }, "", "seed"))
        ->type_name("UINT");
    app.add_option("--temperature", c.temperature, "sampling temperature");
    app.add_option("--top-k", c.top_k, "sample only from the k likeliest characters (0: all)");
    app.add_option("--sample-chars", c.sample_chars, "characters generated at the end");
    app.add_option("--metrics", o.metrics_path, "write step,train_loss,val_loss,tokens_per_s to this CSV");
    app.add_option("--probe", o.probe,
                   "the text the attention time-lapse records (at most block size characters; default: the first "
                   "block size characters of the validation split)");
    app.add_option("--history-mib", o.history_mib,
                   "memory for the attention time-lapse in MiB, 0 to 4096 (default 64; 0: none recorded): past it, "
                   "snapshots are thinned")
        ->check(CLI::Range(0.0, 4096.0).description(""));
    // (the ranges in the help's words: CLI11 would print its validator as "INT:INT in [0 - 64]", not a syntax it takes)
    app.add_option("--device", o.device, "Vulkan device index, 0 to 64 (see --list-devices)")
        ->check(CLI::Range(0, 64).description(""));
    std::string cpu_threads = "auto";
    app.add_option("--cpu-threads", cpu_threads,
                   "CPU Vulkan driver (lavapipe): threads each dispatch runs on, auto (default: 1 for the lecture's "
                   "small models, whose steps are many tiny dispatches, else one per core) or a number");
    std::string replicas = "auto";
    app.add_option("--replicas", replicas,
                   "devices each training step is split over, a slice of the batch each (data parallelism, gradients "
                   "averaged on the devices): auto (default: on a CPU Vulkan driver such as lavapipe, one per core "
                   "for the models that run on one thread a dispatch, else 1) or a number from 1 to 8 (any device)");
    app.add_flag("--list-devices", o.list_devices, "list Vulkan devices and exit");
    app.add_flag("--validation", o.validation, "enable the Khronos validation layer");
    app.add_flag("--quiet", o.quiet, "headless: no progress line");
    app.add_flag("--profile", o.profile, "headless: at the end, the Performance panel's figures: time per step (wall, GPU, host), the shares of training, evaluation and sampling, GPU memory, GPU time per step by kernel");
    app.add_option("--save", o.save_path, "headless: checkpoint (safetensors) written at every evaluation, at the end and on Ctrl+C");
    app.add_option("--resume", o.resume_path, "headless: continue from a checkpoint; --max-iters counts from step 0 (the window: Ctrl+O)");
    app.add_option("--exit-after-steps", o.exit_after_steps,
                   "window: train N steps (1 to 100000000), write --screenshot (if given) and exit (0; 2 if training diverges or "
                   "fails first)")
        ->check(CLI::Range(1, 100000000).description(""));
    app.add_option("--screenshot", o.screenshot_path, "window: PNG path for --exit-after-steps and F12");
    app.add_option("--fps", o.fps, "window: frame-rate cap, 1 to 240 (default 30)")
        ->check(CLI::Range(1, 240).description(""));
    app.add_option("--save-cpu", o.save_cpu,
                   "window: while it trains unwatched (no input for 1.5 s), drawing takes at most 15% of the time: "
                   "on (default) | off (always --fps)")
        ->transform(on_off)->type_name("on|off");
    app.add_option("--autosave", o.autosave_min,
                   "window: autosave every MINUTES (fractions allowed, e.g. 0.05 = 3 s; 0: off; default 5) and on quit, "
                   "to attnlab_autosave.safetensors in the working folder");
    app.add_option("--checkpoint", o.checkpoint_path,
                   "window: the file Ctrl+S saves to and Ctrl+O loads (default attnlab_run.safetensors)");
    std::string fault;
    app.add_option("--inject-fault", fault,
                   "tests: KIND@STEP makes KIND (nan, oom, device-lost) happen at training step STEP, once");
    app.footer("\nThe lecture's self-attention demos, as text: attnlab lab --list, attnlab lab NAME [--help]\n"
               "In the window: Space pause, S step, R reset (asks first), F12 screenshot, H all heads, L the Lab, "
               "Ctrl+S / Ctrl+O checkpoint.");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        std::printf("%s", app.help().c_str());
        return 0;
    } catch (const CLI::ParseError& e) {
        std::string msg = e.what();
        // CLI11's "Could not convert: --flag = value" (not a number, or too big for one) said as the range checks say it
        const std::string cnc = "Could not convert: ";
        if (size_t eq = msg.find(" = "); msg.rfind(cnc, 0) == 0 && eq != std::string::npos) {
            std::string value = msg.substr(eq + 3);
            char* end = nullptr;
            double d = std::strtod(value.c_str(), &end);
            // a flag that counts refused a fraction (1.5): a number, but not a whole one
            bool fraction = !value.empty() && *end == '\0' && std::isfinite(d) && d != std::floor(d);
            msg = msg.substr(cnc.size(), eq - cnc.size()) + ": '" + value +
                  (fraction ? "' is not a whole number" : "' is not a number, or too large for one");
        }
        std::fprintf(stderr, "error: %s (see attnlab --help)\n", msg.c_str());
        return 2;
    }
    if (app.count("--data") == 0) o.data_path = default_corpus_path();
    // "auto" (0) or a count from 1 to most
    auto auto_or_count = [](const std::string& text, const char* flag, const char* what, long most, int& out) {
        if (text == "auto") return true;
        char* end = nullptr;
        long n = std::strtol(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0' || n < 1 || n > most) {
            std::fprintf(stderr, "error: %s must be auto or a number of %s from 1 to %ld (got '%s')\n", flag, what, most,
                         text.c_str());
            return false;
        }
        out = int(n);
        return true;
    };
    if (!auto_or_count(cpu_threads, "--cpu-threads", "threads", 256, o.cpu_threads) ||
        !auto_or_count(replicas, "--replicas", "devices", 8, o.replicas))
        return 2;
    if (o.headless && (o.exit_after_steps > 0 || !o.screenshot_path.empty())) {
        std::fprintf(stderr, "error: --exit-after-steps and --screenshot are for the window: drop --headless "
                             "(headless training stops after --max-iters)\n");
        return 2;
    }
    if (o.headless && (app.count("--autosave") > 0 || app.count("--checkpoint") > 0)) {
        std::fprintf(stderr, "error: --autosave and --checkpoint are for the window: headless, use --save FILE "
                             "(written at every evaluation)\n");
        return 2;
    }
    if (o.headless && (app.count("--fps") > 0 || app.count("--save-cpu") > 0)) {
        std::fprintf(stderr, "error: --fps and --save-cpu are for the window: drop them, or drop --headless\n");
        return 2;
    }
    if (!o.headless && !o.list_devices) {
        if (app.count("--resume") > 0 || app.count("--save") > 0) {
            std::fprintf(stderr, "error: --resume and --save are for --headless: in the window, Ctrl+O loads and Ctrl+S "
                                 "saves the file named by --checkpoint FILE (the window also autosaves)\n");
            return 2;
        }
        if (app.count("--profile") > 0 || app.count("--quiet") > 0) {
            std::fprintf(stderr, "error: --profile and --quiet are for --headless: the window's Performance panel shows "
                                 "the per-kernel profile\n");
            return 2;
        }
    }
    // output files: named, not a folder, not something a rename would destroy (a device such as /dev/null)
    // (--checkpoint is not here: the window may only load it, Ctrl+S then says why it cannot save)
    struct Out { const char* flag; const std::string* path; bool renamed; };
    for (const Out& f : {Out{"--save", &o.save_path, true}, Out{"--metrics", &o.metrics_path, false},
                         Out{"--screenshot", &o.screenshot_path, false}}) {
        if (app.count(f.flag) == 0) continue;
        std::string err = output_path_problem(*f.path, f.renamed);
        if (!err.empty()) {
            std::fprintf(stderr, "error: %s %s\n", f.flag, err.c_str());
            return 2;
        }
    }
    if (!o.screenshot_path.empty()) {  // the screenshot is PNG data: a name that says otherwise would mislead
        std::string ext = std::filesystem::path(o.screenshot_path).extension().string();
        for (char& ch : ext) ch = char(std::tolower(static_cast<unsigned char>(ch)));
        if (ext != ".png") {
            std::fprintf(stderr, "error: --screenshot writes PNG images: name the file .png (got '%s')\n",
                         o.screenshot_path.c_str());
            return 2;
        }
    }
    if (!o.save_path.empty() && !o.metrics_path.empty() && same_file(o.save_path, o.metrics_path)) {
        std::fprintf(stderr, "error: --save and --metrics name the same file '%s': give each its own\n",
                     o.save_path.c_str());
        return 2;
    }
    // an output over an input would destroy it: the text learnt from, or (the metrics) the checkpoint resumed
    // (--save over --resume is fine: it is read first, then continued)
    // (the same test the writers make, io/files.h: device and inode, through links and ../)
    struct Clash { const char *out_flag, *in_what; const std::string *out, *in; };
    const std::string none, &window_ckpt = o.headless ? none : o.checkpoint_path;  // --checkpoint: the window's
    for (const Clash& c : {Clash{"--save", "the corpus", &o.save_path, &o.data_path},
                           Clash{"--checkpoint", "the corpus", &o.checkpoint_path, &o.data_path},
                           Clash{"--metrics", "the corpus", &o.metrics_path, &o.data_path},
                           Clash{"--screenshot", "the corpus", &o.screenshot_path, &o.data_path},
                           Clash{"--metrics", "the --resume checkpoint", &o.metrics_path, &o.resume_path},
                           Clash{"--metrics", "the --checkpoint file", &o.metrics_path, &window_ckpt},
                           Clash{"--screenshot", "the --resume checkpoint", &o.screenshot_path, &o.resume_path},
                           Clash{"--screenshot", "the --metrics file", &o.screenshot_path, &o.metrics_path}})
        if (app.count(c.out_flag) > 0 && same_file(*c.out, *c.in)) {
            std::fprintf(stderr, "error: %s '%s' would overwrite %s: give %s another name\n", c.out_flag,
                         c.out->c_str(), c.in_what, c.out_flag);
            return 2;
        }
    if (o.checkpoint_path.empty() || std::filesystem::is_directory(o.checkpoint_path)) {
        std::fprintf(stderr, "error: --checkpoint %s\n", o.checkpoint_path.empty() ? "needs a file name"
                                                        : ("'" + o.checkpoint_path + "' is a folder: name a file in it").c_str());
        return 2;
    }
    for (const Out& f : {Out{"--resume", &o.resume_path, false}, Out{"--data", &o.data_path, false}})
        if (app.count(f.flag) > 0 && f.path->empty()) {
            std::fprintf(stderr, "error: %s needs a file name\n", f.flag);
            return 2;
        }
    if (!std::isfinite(o.autosave_min) || o.autosave_min < 0 || o.autosave_min > 525600) {
        std::fprintf(stderr, "error: --autosave must be a number of minutes from 0 (off) to 525600 (got %g)\n",
                     o.autosave_min);
        return 2;
    }
    if (!fault.empty() && !parse_fault(fault, o.fault)) {
        std::fprintf(stderr, "error: --inject-fault must be KIND@STEP with KIND nan, oom or device-lost and STEP from "
                             "1 to 100000000 (got '%s')\n", fault.c_str());
        return 2;
    }
    c.preset = preset;
    if (encoder) c.causal = false;
    if (no_pos) c.use_pos = false;
    for (const auto* opt : app.get_options())
        if (opt->count() > 0 && !opt->get_lnames().empty()) o.given.insert("--" + opt->get_lnames().front());
    if (encoder) o.given.insert("--encoder");
    if (no_pos) o.given.insert("--no-pos");
    if (c.kind == ModelKind::Bigram)  // a table of next-character logits: nothing for these flags to change
        for (const char* f : {"--n-embd", "--head-size", "--n-head", "--n-layer", "--ffn", "--residual", "--layernorm",
                              "--dropout", "--encoder", "--no-pos"})
            if (o.given.count(f)) {
                std::fprintf(stderr, "error: %s has no effect on the bigram model (a table of next-character logits: "
                                     "no embeddings, attention or layers): pick a transformer --preset, e.g. single-head\n",
                             f);
                return 2;
            }
    auto errs = validate(c);
    if (!errs.empty()) {
        std::fprintf(stderr, "error: %s\n", errs.front().message.c_str());
        return 2;
    }
    return -1;
}

}  // namespace attn
