// `attnlab import nanogpt|gpt2|llmc FILE -o RUN.safetensors` and `attnlab export nanogpt|llmc RUN -o OUT`: runs made
// elsewhere (nanoGPT's ckpt.pt, Hugging Face's GPT-2, llm.c's .bin) in as Attention Lab runs, and back out
// (engine/io/nanogpt.h, engine/io/gpt2.h).
#pragma once

namespace attn {

// argv[0] is "import" or "export". Returns the exit code: 0, or 2 after one line on stderr saying what to change.
int run_import_command(int argc, char** argv);

}  // namespace attn
