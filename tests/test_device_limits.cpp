// What a device's limits do to a model: tensors past its storage-binding limit cut into ranges (the same bits),
// what cannot be cut refused up front, and a CPU driver's loop limit.
#include <algorithm>

#include "corpus.h"
#include "gpu.h"
#include "model_config.h"
#include "train/trainer.h"

using namespace attn;

TEST_CASE("logits past the device's tensor limit, or an embedding it cannot cut, are refused up front", "[model]") {
    std::string text;
    for (uint32_t ch = 0x10000; ch < 0x10000 + 20000; ch++) text += encode_utf8(ch);
    Dataset data = Dataset::from_text(text + text, "wide");
    const uint64_t limit = test::ctx().policy().max_storage_range;
    Config c = tiny_config("single-head");
    c.n_embd = int(std::min<uint64_t>(limit / (20000 * 4) + 4, 4096)) / 4 * 4 + 2;  // past the limit, not a multiple of 4
    c.head_size = 2;
    if (uint64_t(c.n_embd) * 20000 * 4 > limit)
        REQUIRE_THROWS_WITH(Trainer::check(test::ctx(), data, c),
                            Catch::Contains("the token embedding (20000 tokens x n_embd") && Catch::Contains("multiple of 4"));
    c = tiny_config("single-head");
    c.head_size = 6;  // lm_head reads 6 channels: the plain kernels, which bind the logits whole
    REQUIRE(c.lm_head_width() % 4 != 0);
    c.batch_size = int(std::min<uint64_t>(limit / (uint64_t(c.block_size) * 20000 * 4) + 1, 4096));
    if (uint64_t(c.batch_size) * c.block_size * 20000 * 4 > limit)
        REQUIRE_THROWS_WITH(Trainer::check(test::ctx(), data, c),
                            Catch::Contains("the logits of a batch") && Catch::Contains("lower --batch-size"));
}

// Sets the storage-binding limit the kernels see (KernelPolicy::max_storage_range) for one scope, and restores the
// whole policy after it.
struct BindingLimit {
    explicit BindingLimit(uint64_t bytes) : saved(test::ctx().policy()) { test::ctx().edit_policy().max_storage_range = bytes; }
    ~BindingLimit() { test::ctx().edit_policy() = saved; }
    KernelPolicy saved;
};

TEST_CASE("an embedding and parameters past the binding limit train in ranges, to the same bits", "[model]") {
    // 512 characters x n_embd 64: wte, lm_head and their gradients 128 KiB, a batch's logits (64 rows) 128 KiB, the
    // flat parameters over 512 KiB; under a 64 KiB limit dwte, lm_head's dw and forward, the cross-entropy and AdamW
    // run in ranges (Program refuses any binding past the limit). Tied (nanoGPT) and untied heads.
    std::string text;
    for (int rep = 0; rep < 6; rep++)
        for (uint32_t ch = 0x400; ch < 0x400 + 512; ch++) text += encode_utf8(0x400 + (ch * 7 + rep * 31) % 512);
    Dataset data = Dataset::from_text(text, "cyrillic and more");
    REQUIRE(data.vocab_size() == 512);
    for (const char* preset : {"residual", "nanogpt-cpu"}) {
        DYNAMIC_SECTION(preset) {
            Config c;
            c.apply_preset(preset);
            c.n_embd = 64;
            c.n_head = 4;
            c.head_size = 16;
            c.n_layer = 2;
            c.block_size = 16;
            c.batch_size = 4;
            c.dropout = 0;
            c.seed = 5;
            REQUIRE(make_layout(c, 512).flat * 4 > (256u << 10));
            auto train = [&](std::vector<float>& params, std::vector<float>& losses) {
                Trainer tr(test::ctx(), data, c, 1);
                std::vector<uint32_t> off = {3, 700, 1500, 2900};
                for (int i = 0; i < 3; i++) losses.push_back(tr.step(&off).loss);
                params = tr.model().read_params();
            };
            std::vector<float> whole, ranged, whole_loss, ranged_loss;
            // one row range for every sum (ATTNLAB_ROW_SPLITS aside): a limit also caps how many ranges fit, which
            // would change the order of the sums, not what this compares
            BindingLimit keep(test::ctx().policy().max_storage_range);  // restores the policy's row_splits too
            test::ctx().edit_policy().row_splits = 1;
            train(whole, whole_loss);
            {
                BindingLimit small(64 << 10);
                REQUIRE_NOTHROW(Trainer::check(test::ctx(), data, c));
                train(ranged, ranged_loss);
            }
            REQUIRE(ranged_loss == whole_loss);
            REQUIRE(ranged == whole);
        }
    }
}

TEST_CASE("a CPU driver refuses shapes whose shader loops it would cut short", "[model]") {
    if (test::ctx().props().deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) {
        WARN("not a CPU driver: a GPU has no such limit");
        return;
    }
    Config c;
    c.apply_preset("single-head");
    // one more distinct character than allowed, as UTF-8 (from U+10000, four bytes each)
    std::string text;
    for (uint32_t ch = 0x10000; ch < 0x10000 + Trainer::k_cpu_max_vocab + 1; ch++) text += encode_utf8(ch);
    Dataset big = Dataset::from_text(text + text, "big");
    REQUIRE(big.vocab_size() == int(Trainer::k_cpu_max_vocab) + 1);
    REQUIRE_THROWS_WITH(Trainer::check(test::ctx(), big, c), Catch::Contains("vocabulary") && Catch::Contains("65537") &&
                                                                 Catch::Contains("at most 65536"));
    // the bigram's (V, V) table past a tensor's limit (128 MiB on lavapipe: V 5793 and up) is refused up front
    std::string mid;
    for (uint32_t ch = 0x4e00; ch < 0x4e00 + 6000; ch++)
        mid += {char(0xe0 | (ch >> 12)), char(0x80 | ((ch >> 6) & 63)), char(0x80 | (ch & 63))};
    Config bigram;
    bigram.apply_preset("bigram");
    REQUIRE_THROWS_WITH(Trainer::check(test::ctx(), Dataset::from_text(mid + mid, "mid"), bigram),
                        Catch::Contains("the bigram's table of 6000 x 6000 weights") &&
                            Catch::Contains("distinct characters, or another preset"));
    {  // a live batch whose activations (B, T, C) pass the binding limit fails while recording: the trainer stays as
       // it was (the limit lowered to 256 KiB: 300 x 8 x 32 floats are 300 KiB)
        Dataset tiny = Dataset::from_text(test::tiny_text(), "tiny");
        Config small = c;
        small.batch_size = 4;
        Trainer tr(test::ctx(), tiny, small);
        Config live = small;
        live.batch_size = 300;
        REQUIRE(uint64_t(live.batch_size) * live.block_size * live.n_embd * 4 > (256u << 10));
        {
            BindingLimit low(256 << 10);
            REQUIRE_THROWS_WITH(tr.set_live(live), Catch::Contains("exceeds"));
        }
        REQUIRE(tr.config().batch_size == 4);
        REQUIRE(tr.step().finite);
    }
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    Config rows = c;
    rows.batch_size = 4096;  // x block 8 = 32768: allowed
    REQUIRE_NOTHROW(Trainer::check(test::ctx(), data, rows));
    rows.block_size = 9;
    REQUIRE_THROWS_WITH(Trainer::check(test::ctx(), data, rows), Catch::Contains("--batch-size x --block-size is 36864"));
    Config span = c;
    span.block_size = 1024;
    span.n_embd = 128;
    span.head_size = 0;  // one head of 128, the vec4 kernels' largest: their loops over it unroll
    REQUIRE_NOTHROW(Trainer::check_cpu_loops(test::ctx(), span, 65));
    span.n_embd = 132;  // a head of 132: the scalar kernels, 1024 x 132
    REQUIRE_THROWS_WITH(Trainer::check_cpu_loops(test::ctx(), span, 65),
                        Catch::Contains("--block-size x head size (132: not a multiple of 4 up to 128) is 135168"));
    span.block_size = 124;  // 124 x 132 = 16368
    REQUIRE_NOTHROW(Trainer::check_cpu_loops(test::ctx(), span, 65));
    // a live batch-size change is checked too, and leaves the trainer as it was
    Config small = c;
    small.block_size = 16;
    small.batch_size = 4;
    Trainer tr(test::ctx(), data, small);
    Config live = small;
    live.batch_size = 2048;  // x 16 = 32768: allowed
    REQUIRE_NOTHROW(tr.set_live(live));
    live.batch_size = 2049;
    REQUIRE_THROWS_WITH(tr.set_live(live), Catch::Contains("--batch-size x --block-size is 32784"));
    REQUIRE(tr.config().batch_size == 2048);
}

// Data parallelism (Trainer::replicas_for): the batch split over devices, gradients averaged before AdamW.
