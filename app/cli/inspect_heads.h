// `attnlab inspect FILE --heads [--step N]`: every head's detection scores (train/head_scores.h: previous,
// duplicate, induction, first, current, entropy and a label) at a recorded step or at the checkpoint's weights, then
// the strongest induction head.
#pragma once
#include <string>

#include "train/checkpoint.h"

namespace attn {

// What `attnlab inspect` was given that --heads uses.
struct HeadsRequest {
    std::string file, data, probe;  // data: --data ("": the checkpoint's corpus); probe: --probe
    int step = 0, device = -1;
    bool has_step = false, has_probe = false;
    bool other_view = false;  // --list, --layer, --head or --sample: other tables, refused beside --heads
};

// Prints the table; returns 0. Throws attn::Error (one line) for a model without attention, a step outside the
// time-lapse, or a time-lapse saved without its weights (the induction probes are computed from them).
int inspect_heads(const HeadsRequest& r);

}  // namespace attn
