// Command-line flags -> RunOptions, with the preset applied first so flags override it; and what --inject-fault does.
#include "cli.h"

#include "attnlab_commit.h"

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
#include "io/nanogpt.h"
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
                          "--activation", "--residual", "--layernorm", "--no-pos", "--bias"})
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
        if (o.given.count("--activation")) asked.gelu = a.gelu, asked.gelu_tanh = a.gelu_tanh;
        if (o.given.count("--residual")) asked.residual = a.residual;
        if (o.given.count("--layernorm")) asked.layernorm = a.layernorm;
        if (o.given.count("--no-pos")) asked.use_pos = a.use_pos;
        if (o.given.count("--bias")) asked.bias = a.bias;
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
    if (o.given.count("--warmup-iters")) c.warmup_iters = a.warmup_iters;
    if (o.given.count("--lr-decay-iters")) c.lr_decay_iters = a.lr_decay_iters;
    if (o.given.count("--min-lr")) c.min_lr = a.min_lr;
    if (o.given.count("--beta2")) c.beta2 = a.beta2;
    if (o.given.count("--grad-clip")) c.grad_clip = a.grad_clip;
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

std::string one_line(const std::string& msg) {
    std::string out;
    for (unsigned char ch : msg) {
        if (ch == '\n') out += "\\n";
        else if (ch == '\t') out += "\\t";
        else if (ch < 32 || ch == 127) {
            char b[8];
            std::snprintf(b, sizeof b, "\\x%02x", ch);
            out += b;
        } else out += char(ch);
    }
    return out;
}

int run_command(const std::string& what, const std::function<int()>& body) {
    auto say = [](const std::string& msg) {
        std::fprintf(stderr, "error: %s\n", one_line(msg).c_str());
        return 2;
    };
    try {
        return body();
    } catch (const Error& e) {
        return say(e.what());
    } catch (const std::bad_alloc&) {
        return say("not enough memory for " + what);
    } catch (const std::filesystem::filesystem_error& e) {  // what() repeats the paths in brackets: said once here
        return say("cannot read '" + e.path1().string() + "': " + e.code().message());
    } catch (const std::ios_base::failure& e) {  // libstdc++'s what() is "basic_filebuf::underflow error reading …"
        return say("cannot read " + what + ": " + e.code().message());
    } catch (const std::system_error& e) {  // a thread or lock the system refused
        return say(what + ": " + e.code().message());
    } catch (const std::exception& e) {
        return say("unexpected failure with " + what + ": " + e.what());
    }
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

// Edit distance between two option names (insertions, deletions, substitutions).
static size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); j++) row[j] = j;
    for (size_t i = 1; i <= a.size(); i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); j++) {
            size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

// The first argument CLI11 did not take, said as "unknown option --x; did you mean --y?" ("" if none is found).
static std::string unknown_argument(const CLI::App& app, int argc, char** argv) {
    std::vector<std::string> names;  // without the leading --
    for (const CLI::Option* opt : app.get_options())
        for (const std::string& n : opt->get_lnames()) names.push_back(n);
    // the words people reach for first (PyTorch scripts, nanoGPT's config)
    static const std::map<std::string, std::string> synonyms = {
        {"learning-rate", "lr"}, {"learning_rate", "lr"}, {"batch", "batch-size"}, {"batch_size", "batch-size"},
        {"steps", "max-iters"}, {"iters", "max-iters"}, {"max_iters", "max-iters"}, {"block", "block-size"},
        {"block_size", "block-size"}, {"context", "block-size"}, {"heads", "n-head"}, {"n_head", "n-head"},
        {"layers", "n-layer"}, {"n_layer", "n-layer"}, {"n_embd", "n-embd"}, {"corpus", "data"}, {"input", "data"},
        {"text", "data"}, {"file", "data"}, {"eval_interval", "eval-interval"}, {"eval_iters", "eval-iters"},
        {"checkpoint-file", "checkpoint"}, {"load", "resume"}, {"out", "save"}, {"output", "save"}};
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a.rfind("--", 0) != 0 || a.size() < 3) continue;
        std::string name = a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
        if (std::find(names.begin(), names.end(), name) != names.end()) continue;
        std::string best;
        if (auto it = synonyms.find(name); it != synonyms.end()) best = it->second;
        size_t best_d = 3;  // at most 2 edits away
        for (const std::string& n : names)
            if (best.empty() || edit_distance(name, n) < best_d) {
                size_t d = edit_distance(name, n);
                if (d < best_d) best_d = d, best = n;
            }
        return "unknown option --" + name + (best.empty() ? "" : "; did you mean --" + best + "?");
    }
    return "";
}

// The argument CLI11 did not expect (named in its message `extras`) that is a checkpoint: a .safetensors file or
// nanoGPT's ckpt.pt (a zip); "" if none is.
static std::string stray_checkpoint(const std::string& extras, int argc, char** argv) {
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a.empty() || a[0] == '-' || extras.find(a) == std::string::npos) continue;
        std::string ext = std::filesystem::path(a).extension().string();
        if (ext == ".safetensors" || ext == ".pt" || is_torch_zip(a)) return a;
    }
    return "";
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
    app.get_formatter()->column_width(26);
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // a flag given twice: the last counts
    app.add_flag("--headless", o.headless, "train in the terminal, no window");
    // the lecture's stages, then the induction preset and nanoGPT's, each group on a line of its own
    std::string preset_help, group;
    for (auto& n : Config::preset_names()) {
        std::string g = n.rfind("nanogpt", 0) == 0 ? "nanoGPT" : n == "induction" ? "circuits" : "stage";
        if (g != group) preset_help += (preset_help.empty() ? "" : "\n") + g + ":", group = g;
        preset_help += " " + n;
    }
    app.add_option("--preset", preset, preset_help)->type_name("NAME");
    app.add_option("--data", o.data_path, "UTF-8 text file to learn from (default: tiny Shakespeare)\n"
                                          "induction or induction:SEED: generated repeats (docs/induction.md)")
        ->type_name("FILE");
    app.add_option("--tokenizer", o.tokenizer, "chars (the lecture's, default), bpe:N (N ids of byte-level BPE\n"
                                                "learned on the corpus) or GPT-2's files (docs/tokens.md)")
        ->type_name("KIND");
    // each default as the preset sets it (the help of `attnlab --preset gpt --help` shows gpt's)
    auto dflt = [](double v) {
        char b[48];
        std::snprintf(b, sizeof b, " (default %g)", v);
        return std::string(b);
    };
    app.add_option("--batch-size", c.batch_size, "sequences per step, B" + dflt(c.batch_size));
    app.add_option("--block-size", c.block_size, "context length, T" + dflt(c.block_size));
    app.add_option("--n-embd", c.n_embd, "embedding width, C" + dflt(c.n_embd));
    app.add_option("--head-size", c.head_size, "attention head size (HS); 0: n_embd / n_head");
    app.add_option("--n-head", c.n_head, "attention heads per layer, NH" + dflt(c.n_head));
    app.add_option("--n-layer", c.n_layer, "transformer blocks" + dflt(c.n_layer));
    // on | off (also 1 | 0, true | false) -> "1" | "0" for a bool
    CLI::Validator on_off(
        [](std::string& v) -> std::string {
            if (v == "on" || v == "1" || v == "true") return v = "1", "";
            if (v == "off" || v == "0" || v == "false") return v = "0", "";
            return "must be on or off (got '" + v + "')";
        },
        "", "on|off");
    app.add_option("--ffn", c.ffn, "feed-forward after attention")->transform(on_off)->type_name("on|off");
    app.add_option_function<std::string>(
           "--activation",
           [&c](const std::string& v) {
               c.gelu = v != "relu";
               c.gelu_tanh = v == "gelu-tanh";
           },
           "the feed-forward's: relu (the lecture), gelu (nanoGPT)\nor gelu-tanh (GPT-2 in Hugging Face and llm.c)")
        ->check(CLI::Validator(
            [](std::string& v) -> std::string {
                return v == "relu" || v == "gelu" || v == "gelu-tanh" ? "" : "must be relu, gelu or gelu-tanh (got '" + v + "')";
            },
            "", "relu|gelu|gelu-tanh"))
        ->type_name("relu|gelu|gelu-tanh");
    app.add_option("--residual", c.residual, "residual connections + projections")
        ->transform(on_off)->type_name("on|off");
    app.add_option("--layernorm", c.layernorm, "pre-norm LayerNorm in each block and before lm_head")
        ->transform(on_off)->type_name("on|off");
    app.add_option("--bias", c.bias, "nanogpt presets: every Linear and LayerNorm bias")
        ->transform(on_off)->type_name("on|off");
    app.add_option("--dropout", c.dropout, "dropout probability, training only" + dflt(c.dropout));
    bool encoder = false, no_pos = false;
    app.add_flag("--encoder", encoder, "no causal mask: every position sees every other (an encoder)");
    app.add_flag("--no-pos", no_pos, "no position embeddings (attention has no notion of order)");
    app.add_option("--lr", c.lr, "AdamW learning rate" + dflt(c.lr));
    app.add_option("--weight-decay", c.weight_decay, "AdamW weight decay" + dflt(c.weight_decay));
    app.add_option("--warmup-iters", c.warmup_iters, "steps of linear lr warm-up (nanoGPT's schedule)" + dflt(c.warmup_iters));
    app.add_option("--lr-decay-iters", c.lr_decay_iters, "cosine decay of lr to --min-lr at this step, 0: none" +
                                                             dflt(c.lr_decay_iters));
    app.add_option("--min-lr", c.min_lr, "the lr once decayed (--lr-decay-iters)" + dflt(c.min_lr));
    app.add_option("--beta2", c.beta2, "AdamW's second-moment decay" + dflt(c.beta2));
    app.add_option("--grad-clip", c.grad_clip, "clip the gradient's norm to this, 0: off" + dflt(c.grad_clip));
    app.add_option("--max-iters", c.max_iters, "training steps" + dflt(c.max_iters));
    app.add_option("--eval-interval", c.eval_interval, "steps between loss estimates" + dflt(c.eval_interval));
    app.add_option("--eval-iters", c.eval_iters, "batches per split in each loss estimate" + dflt(c.eval_iters));
    app.add_option("--seed", c.seed, "random seed, 0 to 2^53" + dflt(double(c.seed)))
        ->check(CLI::Validator([](std::string& v) { return seed_problem(v); }, "", "seed"))
        ->type_name("UINT");
    app.add_option("--temperature", c.temperature, "sampling temperature" + dflt(c.temperature));
    app.add_option("--top-k", c.top_k, "sample from the k likeliest characters, 0: all" + dflt(c.top_k));
    app.add_option("--sample-chars", c.sample_chars, "characters generated at the end" + dflt(c.sample_chars));
    app.add_option("--metrics", o.metrics_path, "write step,train_loss,val_loss,tokens_per_s to this CSV")
        ->type_name("FILE");
    app.add_option("--probe", o.probe,
                   "the text the attention time-lapse shows (default: a validation line)");
    app.add_option("--history-mib", o.history_mib,
                   "the time-lapse's memory, 0 (none) to 4096 MiB" + dflt(o.history_mib))
        ->type_name("MIB")
        ->check(CLI::Validator(
            [](std::string& v) -> std::string {  // CLI::Range lets nan through and prints its bounds as 0.000000
                char* end = nullptr;
                double d = std::strtod(v.c_str(), &end);
                if (v.empty() || *end != '\0' || !std::isfinite(d) || d < 0 || d > 4096)
                    return "must be a number of MiB from 0 to 4096 (got '" + v + "')";
                return "";
            },
            "", "MIB"));
    // (the ranges in the help's words: CLI11 would print its validator as "INT:INT in [0 - 64]", not a syntax it takes)
    app.add_option("--device", o.device, "Vulkan device index, 0 to 64 (see --list-devices)")
        ->check(CLI::Range(0, 64).description(""));
    std::string cpu_threads = "auto";
    app.add_option("--cpu-threads", cpu_threads,
                   "CPU driver: threads a dispatch runs on, auto or a number")
        ->type_name("auto|N");
    std::string replicas = "auto";
    app.add_option("--replicas", replicas,
                   "devices a step is split over, auto or 1 to 8")
        ->type_name("auto|N");
    app.add_flag("--list-devices", o.list_devices, "list Vulkan devices and exit");
    app.add_flag("--validation", o.validation, "enable the Khronos validation layer");
    app.add_flag("--quiet", o.quiet, "headless: no progress line");
    app.add_flag("--profile", o.profile, "headless: at the end, time per step, shares and GPU time by kernel");
    app.add_option("--save", o.save_path, "headless: checkpoint at every evaluation, the end and Ctrl+C")
        ->type_name("FILE");
    app.add_option("--resume", o.resume_path, "headless: continue a checkpoint (--max-iters counts from 0)")
        ->type_name("FILE");
    app.add_option("--exit-after-steps", o.exit_after_steps,
                   "window: train N steps, write --screenshot, exit")
        ->type_name("N")
        ->check(CLI::Range(1, 100000000).description(""));
    app.add_option("--screenshot", o.screenshot_path, "window: PNG path for --exit-after-steps and F12")
        ->type_name("FILE");
    app.add_option("--fps", o.fps, "window: frame-rate cap, 1 to 240" + dflt(o.fps))
        ->check(CLI::Range(1, 240).description(""));
    app.add_option("--save-cpu", o.save_cpu,
                   "window: unwatched, drawing takes at most 15% of the time")
        ->transform(on_off)->type_name("on|off");
    app.add_option("--autosave", o.autosave_min,
                   "window: minutes between autosaves, 0: off" + dflt(o.autosave_min))
        ->type_name("MIN");
    app.add_option("--checkpoint", o.checkpoint_path,
                   "window: Ctrl+S / Ctrl+O's file (default " + o.checkpoint_path + ")")
        ->type_name("FILE");
    std::string fault;
    app.add_option("--inject-fault", fault,
                   "tests: nan, oom or device-lost at step STEP, once")
        ->type_name("KIND@STEP");
    app.add_flag("--version", o.version, "print the version and exit");
    app.footer("\nDefaults are the preset's (--preset, else single-head); docs/runs.md has every flag's details.\n"
               "The lecture's demos as text: attnlab lab --list; a saved run's attention: attnlab inspect FILE\n"
               "Runs made elsewhere: attnlab import nanogpt|gpt2|llmc FILE -o RUN, export nanogpt|llmc RUN -o OUT\n"
               "Tokens: attnlab tokenize assets/gpt2 TEXT (GPT-2's BPE ids; docs/tokens.md)\n"
               "In the window: Space pause, S step, R reset, F12 screenshot, H all heads, L the Lab,\n"
               "Left/Right the time-lapse, Ctrl+S / Ctrl+O checkpoint.");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        std::printf("%s", app.help().c_str());
        return 0;
    } catch (const CLI::ParseError& e) {
        std::string msg = e.what();
        if (dynamic_cast<const CLI::ExtrasError*>(&e)) {  // what was not understood, and what was probably meant
            std::string said = unknown_argument(app, argc, argv), ckpt = stray_checkpoint(msg, argc, argv);
            if (!said.empty()) msg = said;
            else if (!ckpt.empty())
                msg = "'" + ckpt + "' is a checkpoint: continue it with attnlab --headless --resume " + ckpt +
                      ", or see its attention with attnlab inspect " + ckpt;
            else msg += ": a value goes after its option (--data FILE)";
        }
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
    if (o.version) {
        std::printf("attnlab %s, commit %s (Attention Lab; Vulkan compute, GLSL shaders)\n", ATTNLAB_VERSION, ATTNLAB_COMMIT);
        return 0;
    }
    // the induction preset's own data: the generated repeats (train/induction_corpus.h), not Shakespeare
    if (app.count("--data") == 0) o.data_path = preset == "induction" ? "induction" : default_corpus_path();
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
    if (app.count("--tokenizer") > 0 && app.count("--resume") > 0) {
        std::fprintf(stderr, "error: a resumed run keeps the tokenizer it was trained with: leave out --tokenizer\n");
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
        for (const char* f : {"--n-embd", "--head-size", "--n-head", "--n-layer", "--ffn", "--activation", "--residual", "--layernorm",
                              "--dropout", "--encoder", "--no-pos", "--bias"})
            if (o.given.count(f)) {
                std::fprintf(stderr, "error: %s has no effect on the bigram model (a table of next-character logits: "
                                     "no embeddings, attention or layers): pick a transformer --preset, e.g. single-head\n",
                             f);
                return 2;
            }
    if (!c.nanogpt && o.given.count("--bias")) {
        std::fprintf(stderr, "error: --bias is nanoGPT's switch: use it with --preset nanogpt-char or nanogpt-cpu (the "
                             "lecture's models have their biases where the lecture puts them)\n");
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
