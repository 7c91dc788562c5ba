// `attnlab lab`: prints the self-attention lab's demos as plain text (for terminals, learners without a display, tests).
#pragma once

namespace attn {

// argv[0] is "lab". `lab --list` lists the demos; `lab NAME [options]` prints one. Returns the exit code:
// 0 on success, 2 for an unknown demo or option or an attn::Error (one line on stderr).
int run_lab_command(int argc, char** argv);

}  // namespace attn
