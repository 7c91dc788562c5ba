// nanoGPT's checkpoints in and out: its `ckpt.pt` (torch.save of model, optimizer, model_args, iter_num,
// best_val_loss, config) and `meta.pkl` (the character vocabulary), read into and written from our Checkpoint.
// The model is Config::nanogpt, whose parameter names are nanoGPT's, so tensors map by name.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "train/checkpoint.h"

namespace attn {

// Whether the file starts as a zip (torch.save's container) rather than a safetensors checkpoint.
bool is_torch_zip(const std::string& path);

// Reads nanoGPT's ckpt.pt as a run to continue: weights, AdamW moments and step (when the optimizer state is there
// and fits), the model from model_args, training settings from config where present (else nanogpt-char's).
// The vocabulary comes from meta_path; "" looks for meta.pkl beside the checkpoint, then falls back to
// corpus_vocab when it has vocab_size characters (nanoGPT's prepare.py: the corpus's characters, sorted).
// `note` receives what the caller should tell the user (e.g. which vocabulary was used). With `tokenizer` (GPT-2's,
// for runs without meta.pkl such as the GPT-2 reproduction or a fine-tune of gpt2) the run reads its tokens instead,
// the model's padding rows past its vocabulary (nanoGPT's 50304) dropped. Throws attn::Error.
Checkpoint import_nanogpt(const std::string& ckpt_path, const std::string& meta_path,
                          const std::vector<uint32_t>* corpus_vocab, std::string* note = nullptr,
                          std::shared_ptr<const BpeTokenizer> tokenizer = nullptr);

struct ExportOptions {
    bool force = false;         // replace an existing DIR/ckpt.pt or DIR/meta.pkl
    bool mask_buffers = false;  // write each block's attn.bias causal mask, which nanoGPT's model.py has (and its strict
                                // load_state_dict wants) on PyTorch before 2.0, without flash attention
};

// Writes DIR/ckpt.pt and DIR/meta.pkl (none for a run of BPE tokens: nanoGPT then reads GPT-2's) so that nanoGPT's `train.py --init_from=resume --out_dir=DIR` continues
// the run (optimizer state in torch's AdamW layout, two param groups as its configure_optimizers makes) and its
// sample.py samples from it. Only nanoGPT-family runs can be exported; DIR is created when missing. An existing file
// is replaced only with opt.force, and neither is replaced before both are written (io/files.h). best_val_loss is the
// run's lowest val loss, or the one it was imported with.
void export_nanogpt(const Checkpoint& ck, const std::string& dir, const ExportOptions& opt = {});

}  // namespace attn
