// Checkpoints in safetensors (JSON header + raw little-endian tensors) with the run in __metadata__:
// config, vocabulary, step, RNG states, loss history and AdamW moments, so a run resumes bit for bit. Moments that
// are all zero (a run at step 0, an import of weights alone) are not stored: "optimizer": "zero" says so.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/config.h"
#include "text/bpe.h"
#include "train/timelapse.h"

namespace attn {

class Trainer;

// What a run has seen, kept by whoever drives the Trainer (headless loop, app), saved with it.
struct RunHistory {
    // tps: training tokens/s since the evaluation before, warm-up steps left out where others ran (0 at a run's
    // first); -1: unknown (a checkpoint from before tokens/s were kept)
    struct Eval { int step; double train, val, tps = 0; };
    std::vector<Eval> evals;
    std::vector<float> step_losses;  // (steps,) raw per-step training loss
    // the best val loss of the run before it came here (nanoGPT's best_val_loss, from an import), carried to export
    std::optional<double> best_val_before;
};

// Everything a Trainer needs to continue exactly where it stopped.
struct TrainerState {
    int step = 0;
    uint64_t rng[4] = {}, eval_rng[4] = {};
    std::vector<float> params, adam_m, adam_v;  // flat, with the model's padding
};

struct Checkpoint {
    Config config;
    std::vector<uint32_t> vocab;  // id -> Unicode code point (empty when the run reads BPE tokens: tokenizer)
    std::string corpus;           // path it was trained on (informational)
    TrainerState state;
    RunHistory history;
    TimeLapse timelapse;  // empty: none recorded (or a checkpoint from before time-lapses)
    std::shared_ptr<const BpeTokenizer> tokenizer;  // the run's byte-level BPE (null: the characters of `vocab`)
};

// The number of token ids the checkpoint's model reads: its tokenizer's, else its characters'.
inline int checkpoint_vocab_size(const Checkpoint& ck) {
    return ck.tokenizer ? ck.tokenizer->vocab_size() : int(ck.vocab.size());
}

constexpr int CHECKPOINT_VERSION = 1;
// The highest step a checkpoint may hold (a run's steps and the window's counters stay far from overflow).
constexpr int k_max_checkpoint_step = 1'000'000'000;

// Atomic, through write_file_atomic (io/files.h): never over the corpus or another file of the run, read back before
// it replaces FILE. Throws attn::Error; FILE is untouched on failure.
void save_checkpoint(const std::string& path, const Checkpoint& ck, const std::vector<struct ParamInfo>& layout);
// Reads and verifies (format, version, checksum, shapes). Throws attn::Error with one line on any problem.
// nanoGPT's ckpt.pt is read too (io/nanogpt.h: its vocabulary from meta.pkl beside it, or corpus_vocab when the
// sizes agree); `note` receives what the user should be told about such an import.
Checkpoint load_checkpoint(const std::string& path, const std::vector<uint32_t>* corpus_vocab = nullptr,
                           std::string* note = nullptr);
// The same from bytes in memory (`path` only names it in messages): what the fuzzer drives.
Checkpoint parse_checkpoint(const std::string& bytes, const std::string& path);
// Refuses a checkpoint whose vocabulary differs from the corpus's, or whose model shape differs from `asked` (when
// the user asked for a model explicitly). One line saying what differs and what to do: which flag to drop, from
// `given` (the flags typed, e.g. "--n-embd", "--preset"; null: name the setting's own flag).
void check_resumable(const Checkpoint& ck, const std::vector<uint32_t>& corpus_vocab, const Config* asked,
                     const std::set<std::string>* given = nullptr);

// Extra named F32 tensors beside the parameters (e.g. gradients for the PyTorch cross-check).
void save_tensors(const std::string& path, const std::vector<std::pair<std::string, std::vector<float>>>& tensors,
                  const std::vector<std::vector<int>>& shapes, const std::string& metadata_json);

}  // namespace attn
