// Config: the one source of truth for every hyperparameter, with the lecture's presets and validation messages.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

enum class ModelKind {
    Bigram,       // logits = Embedding(V, V)[idx]: no attention at all
    Transformer,  // token + position embedding -> n_layer blocks (switches below) -> lm_head
    SingleHead = Transformer,  // the single-head preset is a one-layer Transformer with every switch off
};

struct Config {
    // --- model: changing any of these re-initialises ---
    std::string preset = "single-head";
    ModelKind kind = ModelKind::Transformer;
    int block_size = 8;      // T: context length, the lecture's 8
    int n_embd = 32;         // C: embedding width
    int n_head = 1;          // NH: heads per attention layer
    int head_size = 0;       // HS: 0 means n_embd / n_head (the single head may differ from n_embd)
    int n_layer = 1;         // blocks
    bool ffn = false;        // feed-forward after attention: Linear(C,C)+ReLU, or C->4C->C inside residual blocks
    bool gelu = false;       // the feed-forward's activation: exact GELU (nanoGPT's MLP) instead of the lecture's ReLU
    bool gelu_tanh = false;  // with gelu: GELU's tanh approximation (GPT-2 as Hugging Face and llm.c run it, "gelu_new")
    bool residual = false;   // x + proj(attention), x + ffn: the lecture's Block
    bool layernorm = false;  // pre-norm in each block and a final LayerNorm before lm_head
    float dropout = 0.0f;    // on attention weights and both residual branches, training only
    bool causal = true;      // false: an encoder, every position sees every other (one mask of difference)
    bool use_pos = true;     // false: no position embeddings (attention then has no notion of order)
    // nanoGPT's GPT (model.py): names c_attn/c_proj/c_fc, lm_head tied to the token embedding and without bias,
    // N(0, 0.02) init (residual projections 0.02/sqrt(2 n_layer)), dropout on the embeddings too, weight decay on
    // 2-D tensors only. Needs ffn, gelu, residual and layernorm.
    bool nanogpt = false;
    bool bias = true;        // nanogpt: every Linear and LayerNorm bias (c_attn's included) present, or none
    uint64_t seed = 1337;    // the lecture's torch.manual_seed(1337)
    // --- training: live ---
    int batch_size = 32;        // B: independent sequences per step
    float lr = 1e-3f;           // AdamW learning rate
    float weight_decay = 0.01f; // PyTorch's AdamW default
    float beta2 = 0.999f;       // AdamW's second-moment decay (beta1 is 0.9); nanoGPT's shakespeare_char uses 0.99
    float grad_clip = 0.0f;     // clip the gradient's global norm to this (nanoGPT: 1.0); 0: off
    int max_iters = 5000;
    // nanoGPT's learning-rate schedule: linear warm-up over warmup_iters, then cosine decay from lr to min_lr at
    // lr_decay_iters and min_lr after it. lr_decay_iters 0: no decay (the lecture's constant lr).
    int warmup_iters = 0;
    int lr_decay_iters = 0;
    float min_lr = 0.0f;
    int eval_interval = 500;
    int eval_iters = 200;       // batches per split in estimate_loss
    // --- sampling: live ---
    float temperature = 1.0f;
    int top_k = 0;              // 0: sample from the full distribution
    int sample_chars = 500;

    // The learning rate of step `it` (0 for the first), as nanoGPT's get_lr.
    float lr_at(int it) const;
    int hs() const { return head_size > 0 ? head_size : n_embd / (n_head > 0 ? n_head : 1); }
    int attn_dim() const { return n_head * hs(); }  // width of the concatenated heads
    int ffn_dim() const { return residual ? 4 * n_embd : n_embd; }
    int lm_head_width() const { return (residual || ffn) ? n_embd : attn_dim(); }  // the stream reaching lm_head

    // Sets the lecture's defaults for a preset, keeping seed and sampling settings; false if unknown.
    bool apply_preset(const std::string& name);
    // Whether the model (its sizes and switches, dropout included) differs from what `preset` sets.
    bool differs_from_preset() const;
    static std::vector<std::string> preset_names();
    // The lecture's val loss for a preset (0 if none), for plots and benchmarks; the nanogpt presets' are nanoGPT's
    // README's, and reference_source names where a preset's value comes from ("lecture" or "nanoGPT").
    static double lecture_val_loss(const std::string& preset);
    double lecture_val_loss() const { return lecture_val_loss(preset); }
    static const char* reference_source(const std::string& preset);
    // The preset's reference val loss for this run, or 0 when the model is not the preset's own shape (kind, layers,
    // heads, head size, n_embd, block size): a loss measured on another model size says nothing about this one (a
    // tiny imported nanoGPT run under nanogpt-char's 1.47). The caller checks the corpus (Dataset::is_tiny_shakespeare).
    double reference_val_loss() const;
    // One line when the model's widths keep the kernels off their 4-wide paths (n_embd 33 trains ~18x slower than 32
    // on lavapipe), naming the nearest n_embd that keeps them; "" otherwise.
    std::string speed_note() const;
    // What in this config differs from `other`, in words ("seed 42, lr 0.003"; "" when nothing that changes a
    // run does): the model's shape and switches, seed, and the training settings (not sampling or eval settings).
    std::string differences_from(const Config& other) const;
    // One line describing the model, e.g. "3 layers x 4 heads x 8, ffn, residual, layernorm".
    std::string describe() const;
};

// `base` with the live fields of `from` (those that change no parameter shape: training, sampling, the
// causal mask and dropout): what Trainer::set_live applies and what the app's live controls propose.
Config with_live_fields(const Config& base, const Config& from);

struct ConfigError {
    std::string field;    // the command-line flag, e.g. "--lr"
    std::string message;  // what is wrong and what to do, one line
};

// Every problem with `c`; empty when it can run.
std::vector<ConfigError> validate(const Config& c);

}  // namespace attn
