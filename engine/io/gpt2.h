// GPT-2's weights in and out: Hugging Face's model.safetensors (GPT2Model / GPT2LMHeadModel) and llm.c's
// checkpoint .bin. Both are read into nanoGPT's GPT (Config::nanogpt with biases and GELU's tanh form), whose
// parameter names are GPT-2's own, so a run of either opens, trains on and goes back out like any other.
#pragma once
#include <memory>
#include <string>

#include "train/checkpoint.h"

namespace attn {

// GPT-2's architecture at these sizes (nanoGPT's GPT, biases, GELU's tanh form) with nanoGPT's fine-tuning recipe
// (config/finetune_shakespeare.py: a constant learning rate of 3e-5, no dropout) as its training settings.
Config gpt2_config(int n_layer, int n_head, int n_embd, int block_size);

// A checkpoint read from a file that holds no tokenizer (ck.tokenizer null, ck.vocab empty), with the number of rows
// its token embedding has: the tokenizer's vocabulary, or more (nanoGPT's 50304, llm.c's padded vocabulary).
struct ImportedModel {
    Checkpoint ck;
    int model_vocab = 0;
};

// Hugging Face's GPT-2: `path` is a folder holding model.safetensors (and config.json, read for n_head, the GELU form
// and LayerNorm's epsilon; without it the head size is GPT-2's 64), or the .safetensors file itself. Conv1D weights,
// stored (in, out), are transposed to (out, in); the attention mask buffers are skipped; a saved lm_head.weight must
// equal wte (GPT-2 ties them). F32, F16 and BF16 tensors. Any of GPT-2's four sizes, by the shapes it holds.
// Throws attn::Error with one line naming the file and what is wrong.
ImportedModel read_hf_gpt2(const std::string& path);

// llm.c's checkpoint (train_gpt2.py's write_model): a header of 256 int32 (magic 20240326, version 3 for fp32 or 5
// for bf16, max_seq_len, vocab_size, num_layers, num_heads, channels, padded_vocab_size), then every tensor in
// (out, in) layout, each kind for all layers before the next: wte (Vp, C), wpe (T, C), ln1w (L, C), ln1b, qkvw (L, 3C,
// C), qkvb, attprojw (L, C, C), attprojb, ln2w, ln2b, fcw (L, 4C, C), fcb, fcprojw (L, C, 4C), fcprojb, lnfw (C), lnfb.
// The size must be exactly what the header makes. model_vocab is vocab_size (the padding rows are not read).
ImportedModel read_llmc(const std::string& path);

// Writes `ck` as llm.c's version 3 (fp32) checkpoint, the vocabulary padded with zero rows to a multiple of 128 as
// train_gpt2.py does, atomically (io/files.h). Refused (attn::Error, one line) for a model llm.c does not run: not
// GPT-2's architecture (biases, GELU's tanh form), or a block size or vocabulary it cannot hold. An existing file is
// replaced only with force.
void export_llmc(const Checkpoint& ck, const std::string& path, bool force);

// Keeps the first block_size positions of a model (wpe's first rows): a shorter context, for a device whose buffers
// cannot hold the whole one's logits (GPT-2's 1024 positions x 50257 tokens are 196 MiB; CPU drivers allow 128).
// Throws attn::Error for a size outside 1 to the model's.
void shrink_block(ImportedModel& m, int block_size);

// Gives an imported model its tokenizer: the vocabulary must be the model's, or smaller by padding rows, which are
// dropped (their logits never name a token; the note says how many). Throws attn::Error when the tokenizer has more
// tokens than the model, or 128 fewer or more (no padding: another tokenizer).
void attach_tokenizer(ImportedModel& m, std::shared_ptr<const BpeTokenizer> tokenizer, std::string* note);

// The tokenizer for a model file: `given` (--tokenizer) when not empty, else GPT-2's files in the model's folder
// (vocab.json + merges.txt, encoder.json + vocab.bpe, gpt2_tokenizer.bin). Throws attn::Error naming what to give.
std::shared_ptr<const BpeTokenizer> tokenizer_for(const std::string& model_path, const std::string& given);

}  // namespace attn
