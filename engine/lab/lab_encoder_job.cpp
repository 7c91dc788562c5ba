// Demo 5 (encoder versus decoder) with a progress callback that can also stop it, for the window's worker thread.
#include "lab/lab_encoder_job.h"

#include "model/config.h"
#include "train/trainer.h"

namespace attn::lab {

namespace {

// Mirrors train_one in lab_model.cpp step for step, so the window shows what `attnlab lab encoder` prints.
EncoderRun train_one_stoppable(Context& ctx, const Dataset& data, const EncoderDemoInput& in, bool causal,
                               int done_before, const std::function<bool(int, int)>& keep_going) {
    Config c;
    c.seed = in.seed;
    c.apply_preset("single-head");
    c.causal = causal;
    Trainer tr(ctx, data, c);
    EncoderRun r;
    r.causal = causal;
    double tail_sum = 0;
    int tail_n = 0;
    for (int i = 0; i < in.steps; i++) {
        StepResult s = tr.step();
        if (!s.finite) throw Error("lab encoder: the loss became NaN or Inf; try fewer steps or another seed");
        if (i >= in.steps - in.tail) { tail_sum += s.loss; tail_n++; }
        if (keep_going && !keep_going(done_before + i + 1, 2 * in.steps)) throw Stopped();
    }
    r.train_loss = tail_n ? tail_sum / tail_n : 0.0;
    const int T = c.block_size;
    std::vector<float> att = tr.read_attention();  // (n_layer, NH, T, T): layer 0, head 0 first
    att.resize(size_t(T) * T);
    r.att = Matrix(T, T, att);
    r.sample = tr.generate("", in.sample_chars, 1.0f, 0, in.seed);
    return r;
}

}  // namespace

EncoderDemo run_encoder_demo_stoppable(Context& ctx, const Dataset& data, const EncoderDemoInput& in,
                                       const std::function<bool(int done, int total)>& keep_going) {
    if (in.steps < 1 || in.steps > 100000) throw Error("lab encoder: steps must be 1..100000, e.g. --steps 500");
    if (in.tail < 1 || in.tail > in.steps) throw Error("lab encoder: the loss tail must be 1..steps, e.g. --tail 50");
    if (in.sample_chars < 0 || in.sample_chars > 10000) throw Error("lab encoder: sample length must be 0..10000");
    EncoderDemo d;
    d.steps = in.steps;
    d.tail = in.tail;
    d.decoder = train_one_stoppable(ctx, data, in, true, 0, keep_going);
    d.encoder = train_one_stoppable(ctx, data, in, false, in.steps, keep_going);
    return d;
}

}  // namespace attn::lab
