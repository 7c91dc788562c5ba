// Data parallelism over replicas (engine/train/replicas.cpp): one device per core on a CPU driver, each a slice of
// the batch, their gradients summed; against one device, run to run, across checkpoints and live changes.
#include <algorithm>
#include <cmath>
#include <functional>
#include <thread>
#include "corpus.h"
#include "model_config.h"
#include "gpu.h"
#include "reference/model_ref.h"
#include "train/trainer.h"

using namespace attn;

TEST_CASE("training on replicas follows training on one device, to float rounding", "[model]") {
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    struct Case { const char* preset; int batch, replicas; };
    // 2 replicas of equal slices; 3 of unequal ones (rows 1, 2, 2: the mean weights each by its rows)
    for (Case k : {Case{"single-head", 4, 2}, Case{"gpt", 5, 3}}) {
        INFO(k.preset << ", " << k.replicas << " replicas");
        Config c = tiny_config(k.preset);
        c.batch_size = k.batch;
        c.dropout = 0;  // each slice draws its own masks: the same model only without dropout
        if (std::string(k.preset) == "gpt") {
            c.n_embd = 8; c.head_size = 0; c.n_head = 2; c.n_layer = 2;
            c.grad_clip = 0.5f;  // the mean gradient's norm, clipped on every replica alike
        }
        c.lr = 1e-2f;
        Trainer one(test::ctx(), data, c, 1), split(test::ctx(), data, c, k.replicas);
        REQUIRE(one.replicas() == 1);
        REQUIRE(split.replicas() == k.replicas);
        split.set_display_batch(k.batch - 1);  // its attention is in the last slice, on the first device
        one.set_display_batch(k.batch - 1);
        std::vector<uint32_t> off(c.batch_size);
        Rng pick(3);
        float norm_before = -1;  // replicas update at the start of the next step: their norm is a step behind
        for (int step = 0; step < 12; step++) {
            for (auto& o : off) o = uint32_t(pick.below(data.n_train() - c.block_size));
            StepResult a = one.step(&off), b = split.step(&off);
            INFO("step " << step);
            REQUIRE(b.loss == Approx(a.loss).epsilon(1e-5));
            if (c.grad_clip > 0 && step > 0) REQUIRE(b.grad_norm == Approx(norm_before).epsilon(1e-4));
            else REQUIRE(b.grad_norm == -1.0f);
            norm_before = a.grad_norm;
        }
        split.flush();  // the last update: its norm is the last step's
        REQUIRE(split.last_grad_norm() == Approx(one.last_grad_norm()).epsilon(1e-4));
        test::require_close(test::to_d(split.read_attention()), test::to_d(one.read_attention()), 1e-6, 1e-4,
                            "attention of the displayed element");
        test::require_close(test::to_d(split.model().read_params()), test::to_d(one.model().read_params()), 1e-6,
                            1e-4, "parameters after 12 steps");
        TrainerState ss = split.export_state(), so = one.export_state();
        test::require_close(test::to_d(ss.adam_m), test::to_d(so.adam_m), 1e-7, 1e-3, "AdamW's first moments");
        test::require_close(test::to_d(ss.adam_v), test::to_d(so.adam_v), 1e-9, 1e-3, "AdamW's second moments");
        REQUIRE(split.estimate_loss().val == Approx(one.estimate_loss().val).epsilon(1e-5));
        REQUIRE(split.generate("", 20, 1.0f, 0, 5) == one.generate("", 20, 1.0f, 0, 5));
    }
}

TEST_CASE("replicas: the same bits run to run, whatever element is displayed, and across a checkpoint", "[model]") {
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    Config c = tiny_config("gpt");  // dropout on: each slice its own masks
    c.n_embd = 8; c.head_size = 0; c.n_head = 2; c.n_layer = 2; c.batch_size = 5;
    REQUIRE(c.dropout > 0);
    // 3 replicas, slices of 1, 2 and 2 rows: the first device takes the displayed element's slice, the gradients are
    // summed in slice order all the same (three floats: the order changes the bits)
    auto run = [&](int display, int steps, const TrainerState* from, TrainerState* out) {
        Trainer tr(test::ctx(), data, c, 3);
        if (from) tr.import_state(*from);
        tr.set_display_batch(display);
        std::vector<float> losses;
        for (int i = 0; i < steps; i++) losses.push_back(tr.step().loss);
        if (out) *out = tr.export_state();
        return losses;
    };
    auto a = run(0, 10, nullptr, nullptr), b = run(4, 10, nullptr, nullptr);
    REQUIRE(a == b);
    TrainerState half;
    auto first = run(0, 5, nullptr, &half);
    auto rest = run(0, 5, &half, nullptr);
    first.insert(first.end(), rest.begin(), rest.end());
    REQUIRE(first == a);
    c.dropout = 0;
    REQUIRE(run(0, 10, nullptr, nullptr) != a);  // the masks matter
}

TEST_CASE("a CPU driver on one thread a dispatch splits small models' steps over one device per core", "[model]") {
    test::EnvGuard env("LP_NUM_THREADS");  // the one-thread context below sets it for the process
    const Dataset& data = test::shakespeare();
    Config c;
    c.apply_preset("single-head");
    Config gpt;
    gpt.apply_preset("gpt");
    // the test context runs dispatches on the driver's thread pool: one device
    REQUIRE(Trainer::replicas_for(test::ctx(), c, data.vocab_size()) == 1);
    ContextOptions o;
    o.cpu_threads = 1;
    o.quiet = true;
    Context one_thread(o);
    if (one_thread.props().deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) return;  // GPUs: one device
    REQUIRE(Trainer::replicas_for(one_thread, c, data.vocab_size()) == std::min(Trainer::cpu_cores(), 8));
    REQUIRE(Trainer::replicas_for(one_thread, gpt, data.vocab_size()) == 1);  // its steps are cut into submits
    c.batch_size = 1;
    REQUIRE(Trainer::replicas_for(one_thread, c, data.vocab_size()) == 1);
    REQUIRE(test::error_of([&] { Trainer(test::ctx(), data, c, 9); }).find("from 1 to 8") != std::string::npos);
}

TEST_CASE("replicas: a batch made smaller than the replicas while training leaves the idle ones in step", "[model]") {
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    Config c = tiny_config("single-head");
    c.batch_size = 4;
    c.dropout = 0;
    Trainer one(test::ctx(), data, c, 1), split(test::ctx(), data, c, 3);
    std::vector<float> a, b;
    for (int batch : {4, 2, 1, 4}) {  // 3 replicas: slices of 1, 1, 2 rows; then 0, 1, 1; 0, 0, 1; back to all three
        Config live = c;
        live.batch_size = batch;
        one.set_live(live);
        split.set_live(live);
        for (int i = 0; i < 3; i++) {
            a.push_back(one.step().loss);
            b.push_back(split.step().loss);
        }
    }
    test::require_close(test::to_d(b), test::to_d(a), 1e-6, 1e-5, "losses across batch sizes");
    test::require_close(test::to_d(split.model().read_params()), test::to_d(one.model().read_params()), 1e-6, 1e-4,
                        "parameters");
}

TEST_CASE("replicas: switching profiling on and off between steps changes no bits", "[model]") {
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    Config c = tiny_config("single-head");
    c.batch_size = 4;
    Trainer plain(test::ctx(), data, c, 2), toggled(test::ctx(), data, c, 2);
    for (int i = 0; i < 6; i++) {
        toggled.set_profiling(i % 2 == 0);  // re-records the replicas' programs: the pending update must not be lost
        toggled.profile_next_step();
        INFO("step " << i);
        REQUIRE(toggled.step().loss == plain.step().loss);
    }
    toggled.set_profiling(true);  // runs the pending update: the next step has none, the one after has
    for (int i = 0; i < 2; i++) {
        toggled.profile_next_step();
        REQUIRE(toggled.step().profiled);
        plain.step();
    }
    REQUIRE(toggled.model().read_params() == plain.model().read_params());
    auto times = toggled.last_kernel_times();  // the first replica's: AdamW of the previous step, then its slice
    REQUIRE(std::find_if(times.begin(), times.end(), [](auto& t) { return t.first == "adamw"; }) != times.end());
}
