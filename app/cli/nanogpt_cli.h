// `attnlab import nanogpt CKPT.pt [--meta meta.pkl] -o RUN.safetensors` and `attnlab export nanogpt RUN -o DIR/`:
// nanoGPT's checkpoints in and out (engine/io/nanogpt.h), so a run moves between PyTorch and Attention Lab.
#pragma once

namespace attn {

// argv[0] is "import" or "export". Returns the exit code: 0, or 2 after one line on stderr saying what to change.
int run_nanogpt_command(int argc, char** argv);

}  // namespace attn
