// Demo 5 (encoder versus decoder) with a progress callback that can also stop it, for the window's worker thread.
#pragma once
#include <functional>

#include "lab/lab_model.h"
#include "vk/check.h"

namespace attn::lab {

// Thrown by run_encoder_demo_stoppable when `keep_going` returned false.
struct Stopped : Error {
    Stopped() : Error("lab encoder: stopped") {}
};

// The same numbers as run_encoder_demo (same seeds, steps and sampling); `keep_going(done, total)` is called after
// every training step and before each sample; returning false stops the run by throwing Stopped.
EncoderDemo run_encoder_demo_stoppable(Context& ctx, const Dataset& data, const EncoderDemoInput& in,
                                       const std::function<bool(int done, int total)>& keep_going);

}  // namespace attn::lab
