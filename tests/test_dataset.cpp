// Corpus loading and tokenizer: the lecture's vocabulary and split, and one clear message per bad input.
#include <filesystem>
#include <fstream>

#include "corpus.h"
#include "gpu.h"
#include "model/config.h"
#include "vk/check.h"

using namespace attn;

static std::string write_tmp(const std::string& name, const std::string& bytes) {
    std::string p = test::temp_path("dataset_" + name);
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
}

TEST_CASE("tiny Shakespeare gives the lecture's vocabulary and split", "[dataset]") {
    const Dataset& d = test::shakespeare();
    REQUIRE(d.tokens().size() == 1115394);
    REQUIRE(d.vocab_size() == 65);
    REQUIRE(d.decode(std::vector<uint32_t>{0, 1}) == "\n ");  // sorted: newline, space, ...
    REQUIRE(d.n_train() == 1003854);  // int(0.9 * len(data))
    REQUIRE(d.decode(d.encode("hii there")) == "hii there");
    auto ids = d.encode("hii there");
    REQUIRE(ids == std::vector<uint32_t>{46, 47, 47, 1, 58, 46, 43, 56, 43});  // the lecture's encode('hii there')
    // recognised by content: the lecture's reference losses apply to it, not to a text of the same size
    CHECK(d.is_tiny_shakespeare());
    std::string text = d.decode(d.tokens());
    CHECK(Dataset::from_text(text, "renamed.txt").is_tiny_shakespeare());
    text[500] = text[500] == 'a' ? 'b' : 'a';
    CHECK(!Dataset::from_text(text, "other.txt").is_tiny_shakespeare());
    CHECK(!Dataset::from_text(test::tiny_text(), "tiny").is_tiny_shakespeare());
}

TEST_CASE("UTF-8 text is tokenized by character", "[dataset]") {
    Dataset d = Dataset::from_text("héllo wörld — ✓ héllo wörld — ✓\n", "utf8");
    REQUIRE(d.decode(d.encode("wörld ✓")) == "wörld ✓");
    REQUIRE(d.tokens().size() == 32);  // code points, not bytes
}

TEST_CASE("a prompt's characters outside the corpus are named, each once", "[dataset]") {
    Dataset d = Dataset::from_text("héllo wörld — ✓ héllo wörld — ✓\n", "utf8");
    REQUIRE(d.unknown_chars("wörld ✓") == "");
    REQUIRE(d.unknown_chars("wÖrld zz ✗ z") == "Öz✗");  // what encode() skips, in order, once
    REQUIRE(d.encode("wÖrld zz ✗ z") == d.encode("wrld   "));
    REQUIRE_THAT(d.unknown_chars("caf\xe9"), Catch::Contains("not valid UTF-8"));  // encode() skips all of it
    REQUIRE(d.encode("caf\xe9").empty());
}

TEST_CASE("bad corpora are refused with one clear message", "[dataset]") {
    CHECK_THAT(test::error_of([] { Dataset::from_file("/nonexistent/corpus.txt"); }), Catch::Contains("does not exist"));
    CHECK_THAT(test::error_of([] { Dataset::from_file(std::filesystem::temp_directory_path().string()); }),
               Catch::Contains("is a directory"));
    CHECK_THAT(test::error_of([] { Dataset::from_file(write_tmp("empty.txt", "")); }), Catch::Contains("is empty"));
    CHECK_THAT(test::error_of([] { Dataset::from_file(write_tmp("bin.txt", std::string("ab\0cd", 5))); }),
               Catch::Contains("looks binary"));
    CHECK_THAT(test::error_of([] { Dataset::from_file(write_tmp("latin1.txt", "caf\xe9 au lait")); }),
               Catch::Contains("not valid UTF-8"));
    CHECK_THAT(test::error_of([] { Dataset::from_file(write_tmp("one.txt", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")); }),
               Catch::Contains("only one distinct character"));
    Dataset shortd = Dataset::from_text("abcdefghijklmnopqrstuvwxyz0123456789", "short");
    CHECK_THAT(test::error_of([&] { shortd.check_block_size(8); }), Catch::Contains("too short for block size 8"));
    CHECK(test::error_of([&] { shortd.check_block_size(2); }).empty());
}

TEST_CASE("hyperparameters out of range are refused with the flag's name", "[dataset]") {
    Config c;
    c.apply_preset("single-head");
    REQUIRE(validate(c).empty());
    c.lr = std::nanf("");
    auto e = validate(c);
    REQUIRE(e.size() == 1);
    CHECK(e[0].field == "--lr");
    c.lr = 1e-3f;
    c.block_size = 0;
    CHECK(validate(c).at(0).field == "--block-size");
    c.block_size = 8;
    c.batch_size = -3;
    CHECK(validate(c).at(0).field == "--batch-size");

    // heads that cannot split n_embd: the message names the cause and two widths that work
    Config g;
    g.apply_preset("gpt");  // 6 heads, head size derived
    g.n_embd = 100;
    auto eg = validate(g);
    REQUIRE(eg.size() == 1);
    CHECK(eg[0].field == "--n-embd");
    CHECK_THAT(eg[0].message, Catch::Contains("must be a multiple of --n-head (6)") && Catch::Contains("96 or 102"));
    g.n_embd = 96;
    CHECK(validate(g).empty());
    g.head_size = 8;  // explicit and 6 x 8 != 96: the head size is the one to change
    REQUIRE(validate(g).size() == 1);
    CHECK(validate(g)[0].field == "--head-size");

    // the lecture's stages derive the head size as its code does: Head(n_embd), MultiHeadAttention(4, n_embd // 4)
    Config s;
    s.apply_preset("single-head");
    CHECK(s.hs() == 32);
    CHECK(!s.differs_from_preset());
    s.n_embd = 64;  // the single head widens with the embedding
    CHECK(s.hs() == 64);
    CHECK(validate(s).empty());
    CHECK(s.differs_from_preset());
    s.n_embd = 32;
    s.n_head = 3;  // 3 heads of 10 would leave 2 of the 32 dimensions out: refused, as for stacked blocks
    REQUIRE(validate(s).size() == 1);
    CHECK(validate(s)[0].field == "--n-embd");
    Config l;
    l.apply_preset("layernorm");
    CHECK(l.hs() == 8);
    l.n_embd = 64;  // 4 heads of 16, not an error asking for --head-size
    CHECK(validate(l).empty());
    CHECK(l.hs() == 16);
    Config b;
    b.apply_preset("bigram");
    CHECK(b.eval_interval == 300);  // bigram.py's
}

TEST_CASE("two runs' configs name what differs between them", "[dataset]") {
    attn::Config a, b;
    CHECK(a.differences_from(b).empty());
    b.seed = 42;
    b.lr = 3e-3f;
    CHECK(b.differences_from(a) == "seed 42, lr 0.003");
    attn::Config c;
    c.apply_preset("multi-head");
    CHECK(c.differences_from(a).find("multi-head") == 0);
    CHECK(c.differences_from(a).find("4 heads") != std::string::npos);
    attn::Config d;
    d.temperature = 0.5f;  // sampling changes no run
    d.eval_iters = 10;
    CHECK(d.differences_from(a).empty());
    d.causal = false;
    d.dropout = 0.2f;
    CHECK(d.differences_from(a) == "no mask, dropout 0.2");
}

TEST_CASE("nanoGPT's learning-rate schedule: warm-up, cosine decay, min_lr", "[dataset]") {
    attn::Config c;
    c.lr = 1e-3f;
    CHECK(c.lr_at(0) == 1e-3f);  // no schedule: the lecture's constant lr
    CHECK(c.lr_at(4999) == 1e-3f);
    c.warmup_iters = 100;
    c.lr_decay_iters = 5000;
    c.min_lr = 1e-4f;
    CHECK(c.lr_at(0) == Approx(1e-3 * 1 / 101.0));  // learning_rate * (it + 1) / (warmup_iters + 1)
    CHECK(c.lr_at(99) == Approx(1e-3 * 100 / 101.0));
    CHECK(c.lr_at(100) == Approx(1e-3));             // the cosine starts at lr
    CHECK(c.lr_at(2550) == Approx(5.5e-4));          // half way: min_lr + (lr - min_lr) / 2
    CHECK(c.lr_at(5000) == Approx(1e-4));
    CHECK(c.lr_at(6000) == 1e-4f);                   // past lr_decay_iters: min_lr
    for (int it = 101; it < 5000; it += 97) CHECK(c.lr_at(it) <= c.lr_at(it - 1));  // never rises after warm-up
    c.lr_decay_iters = 50;  // shorter than the warm-up: refused
    auto errs = attn::validate(c);
    REQUIRE(!errs.empty());
    CHECK(errs.front().field == "--lr-decay-iters");
    c.lr_decay_iters = 5000;
    c.min_lr = 2e-3f;  // above lr: refused
    errs = attn::validate(c);
    REQUIRE(!errs.empty());
    CHECK(errs.front().field == "--min-lr");
}
