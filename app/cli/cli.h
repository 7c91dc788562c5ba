// Command-line parsing into an attn::Config plus the run options; one line and exit 2 on bad input.
#pragma once
#include <functional>
#include <set>
#include <string>

#include "model/config.h"
#include "train/session.h"  // FaultInjection

namespace attn {

class Trainer;

struct RunOptions {
    Config cfg;
    std::string data_path = "assets/tinyshakespeare.txt";
    std::string tokenizer = "chars";  // --tokenizer: chars, bpe:N (learned on the corpus) or GPT-2's files
    bool headless = false;
    bool validation = false;
    int device = -1;
    int cpu_threads = 0;       // --cpu-threads: CPU drivers' threads a dispatch (0: auto, chosen for the model)
    int replicas = 0;          // --replicas: devices a training step runs on (0: auto, Trainer::replicas_for)
    bool list_devices = false;
    bool version = false;  // --version
    std::string metrics_path;  // CSV of evals
    std::string probe;         // --probe: the time-lapse's text ("": Session::default_probe)
    double history_mib = double(TimeLapse::k_default_budget >> 20);  // --history-mib: the time-lapse's memory budget
    bool quiet = false;        // no progress line
    bool profile = false;      // per-kernel GPU time table at the end (headless)
    std::string save_path;     // checkpoint written at every evaluation and at the end
    std::string resume_path;   // checkpoint to continue from
    std::set<std::string> given;  // the flags the user typed (resume keeps the checkpoint's model otherwise)
    // --- window ---
    int exit_after_steps = 0;     // >0: train this many steps, screenshot, exit
    std::string screenshot_path;  // where --exit-after-steps and F12 write the PNG
    int fps = 30;                 // UI frame-rate cap (Xvfb does not throttle presents)
    bool save_cpu = true;         // unwatched while training: drawing takes at most a small share of the time
    double autosave_min = 5;      // autosave every N minutes, fractions allowed (0: off)
    std::string checkpoint_path = "attnlab_run.safetensors";  // the Checkpoint field: Ctrl+S / Ctrl+O
    FaultInjection fault;         // --inject-fault (tests)
};

// With --resume: the checkpoint's config with the live settings the user typed on top. Refuses (attn::Error, one
// line) a checkpoint whose vocabulary differs from the corpus's or whose model differs from the one the flags ask for.
Config resume_config(const RunOptions& o, const Checkpoint& ck, const std::vector<uint32_t>& corpus_vocab);

// Returns -1 to go on, or an exit code (0 after --help, 2 after an error already printed).
int parse_cli(int argc, char** argv, RunOptions& out);

// The corpus used without --data: assets/tinyshakespeare.txt in the working folder, else the one in the checkout the
// executable was built in (build/attnlab -> assets/), so attnlab runs from any folder; else the first (for its error).
std::string default_corpus_path();

// Runs a command and says what it throws as one line on stderr (one_line), returning the exit code: attn::Error as
// it says; std::bad_alloc as "not enough memory for WHAT"; a read or write the system refused (std::system_error:
// std::ios_base::failure, std::filesystem::filesystem_error) as "cannot read …"; each exit 2, so no command ends in
// a signal (an uncaught exception's abort). Anything else is "unexpected failure", exit 2 too.
int run_command(const std::string& what, const std::function<int()>& body);

// `msg` on one line: a newline, tab or other control character (a probe's text inside an error) as \n, \t, \xHH.
std::string one_line(const std::string& msg);

// "" when v is a seed, a whole number from 0 to 2^53 (a double holds it exactly), stored in *value if given; else
// why not (--seed of the main command and of `attnlab lab`)
std::string seed_problem(const std::string& v, uint64_t* value = nullptr);

// ContextOptions::cpu_threads for training cfg on a corpus of vocab_size characters: --cpu-threads N, else
// Trainer::cpu_threads_for the model, unless LP_NUM_THREADS is set already (then that stays).
int cpu_threads_option(const RunOptions& o, const Config& cfg, int vocab_size);

}  // namespace attn
