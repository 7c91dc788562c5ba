// `attnlab inspect FILE --ablate L:H[,L:H...]` and `--icl`: circuits from a checkpoint's weights (train/ablation.h).
// --ablate: the probe's per-character losses and the validation loss on fixed batches, intact and with the heads
// knocked out, at a recorded step or the checkpoint's weights. --icl: the loss at each position of the block and the
// in-context learning score at every recorded step.
#pragma once
#include <string>

namespace attn {

struct CircuitsRequest {
    std::string file, data, probe, ablate, mode = "zero";  // mode: --ablation zero|mean
    int step = 0, device = -1;
    bool has_step = false, has_probe = false, icl = false;
};

// Prints the report; returns 0. Throws attn::Error (one line): a bad head list, a model without attention, a step
// outside the time-lapse, a mode the model cannot take.
int inspect_ablate(const CircuitsRequest& r);
int inspect_icl(const CircuitsRequest& r);

}  // namespace attn
