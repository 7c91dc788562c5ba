// The lecture's numbers with each preset's defaults (slow: the full 3000 and 5000 steps).
#include "corpus.h"
#include "gpu.h"
#include "train/trainer.h"

using namespace attn;

static EvalResult train_preset(const std::string& preset) {
    Config c;
    c.apply_preset(preset);
    Trainer tr(test::ctx(), test::shakespeare(), c);
    for (int i = 0; i < c.max_iters; i++) {
        StepResult r = tr.step();
        REQUIRE(r.finite);
    }
    EvalResult e = tr.estimate_loss();
    std::printf("%s after %d steps: train %.4f, val %.4f (lecture %.2f)\n", preset.c_str(), c.max_iters, e.train, e.val,
                c.lecture_val_loss());
    return e;
}

TEST_CASE("bigram reaches the lecture's val loss (<= 2.53)", "[lecture-bigram]") {
    REQUIRE(train_preset("bigram").val <= 2.53);
}

TEST_CASE("single head reaches the lecture's val loss (<= 2.45)", "[lecture-single-head]") {
    REQUIRE(train_preset("single-head").val <= 2.45);
}
