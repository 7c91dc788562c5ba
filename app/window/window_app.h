// The desktop window: GLFW + Dear ImGui on the training device, training in a thread beside it.
#pragma once
#include "cli.h"

namespace attn {
// Returns the exit code: 0, 2 when no window can open (no display), 3 after validation messages.
int run_window(const RunOptions& o);
}
