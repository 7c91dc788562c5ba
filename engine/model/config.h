// Config: the one source of truth for every hyperparameter, with presets and validation messages.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

enum class ModelKind { Bigram, SingleHead };

struct Config {
    // --- model (changing any of these re-initialises) ---
    std::string preset = "single-head";
    ModelKind kind = ModelKind::SingleHead;
    int block_size = 8;    // T: context length, the lecture's 8
    int n_embd = 32;       // C: embedding width
    int head_size = 32;    // HS: the lecture's single head uses head_size = n_embd
    bool causal = true;    // false: an encoder block, every position sees every other
    uint64_t seed = 1337;  // the lecture's torch.manual_seed(1337)
    // --- training (live) ---
    int batch_size = 32;       // B: independent sequences per step
    float lr = 1e-3f;          // AdamW learning rate
    float weight_decay = 0.01f;// PyTorch's AdamW default
    int max_iters = 5000;
    int eval_interval = 500;
    int eval_iters = 200;      // batches per split in estimate_loss
    // --- sampling (live) ---
    float temperature = 1.0f;
    int top_k = 0;             // 0: sample from the full distribution
    int sample_chars = 500;

    // Sets the lecture's defaults for a preset; returns false for an unknown name.
    bool apply_preset(const std::string& name);
    static std::vector<std::string> preset_names();
    // The lecture's val loss for the preset (for plots and checks); 0 if none.
    double lecture_val_loss() const;
};

struct ConfigError {
    std::string field;    // the command-line flag, e.g. "--lr"
    std::string message;  // what is wrong and what to do, one line
};

// Every problem with `c`, for a corpus of `vocab` characters (0: not known yet).
std::vector<ConfigError> validate(const Config& c);

}  // namespace attn
