// The terminal trainer: the lecture's printout, a progress line, a final sample.
#pragma once
#include "cli.h"

namespace attn {
int run_headless(const RunOptions& o);
}
