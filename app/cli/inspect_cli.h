// `attnlab inspect FILE`: what a checkpoint's model makes of a probe text, as the time-lapse records it: every head's
// attention on the probe (characters labelled), the loss on each character, the top-5 predictions at each position
// and each head's summary, at a recorded step (--step) or at the checkpoint's own weights; --list the recorded steps.
#pragma once

namespace attn {

// argv[0] is "inspect". Returns the exit code: 0, or 2 after one line on stderr saying what to change.
int run_inspect_command(int argc, char** argv);

}  // namespace attn
