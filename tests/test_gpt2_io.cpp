// GPT-2's weights in and out (engine/io/gpt2.h): llm.c's .bin written and read back gives the same weights, broken
// or lying files are refused with one line, a tokenizer drops only padding rows. The logits of each imported layout
// against PyTorch are tests/gpt2_import_test.sh's ([.gpt2-logits] below computes ours).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "gpu.h"
#include "io/files.h"
#include "io/gpt2.h"
#include "model/model.h"
#include "text/bpe.h"
#include "train/trainer.h"

using namespace attn;
namespace fs = std::filesystem;

static std::string temp_path(const std::string& name) {
    return (fs::temp_directory_path() / ("attn_gpt2_" + std::to_string(::getpid()) + "_" + name)).string();
}

static void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

static std::string read_bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// A small GPT-2 with random weights as a checkpoint of V token ids (no tokenizer).
static Checkpoint random_gpt2(int V) {
    Checkpoint ck;
    ck.config = gpt2_config(2, 2, 16, 8);
    ModelLayout L = make_layout(ck.config, V);
    ck.state.params.assign(L.flat, 0.0f);
    ck.state.adam_m.assign(L.flat, 0.0f);
    ck.state.adam_v.assign(L.flat, 0.0f);
    Rng rng(5);
    for (const ParamInfo& pi : L.info)
        for (size_t i = 0; i < pi.count; i++) ck.state.params[pi.offset + i] = rng.normal();
    return ck;
}

// A byte-level tokenizer of the 256 bytes and `merges` merges of "a" with what came before ("aa", "aaa", ...).
static std::shared_ptr<const BpeTokenizer> tokenizer(int merges) {
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; b++) tokens.push_back(std::string(1, char(b)));
    std::vector<BpeMerge> m;
    int prev = 'a';
    for (int i = 0; i < merges; i++) {
        tokens.push_back(tokens[size_t(prev)] + "a");
        m.push_back({prev, 'a', int(tokens.size()) - 1});
        prev = int(tokens.size()) - 1;
    }
    return std::make_shared<const BpeTokenizer>(std::move(tokens), std::move(m), -1);
}

TEST_CASE("llm.c's checkpoint written and read back holds the same weights", "[gpt2]") {
    Checkpoint ck = random_gpt2(300);
    ck.tokenizer = tokenizer(44);  // 300 tokens, padded to 384 in the file
    const std::string path = temp_path("model.bin");
    fs::remove(path);
    export_llmc(ck, path, false);
    REQUIRE(fs::file_size(path) == 1024 + 4 * (384 * 16 + 8 * 16 + 2 * (12 * 16 * 16 + 13 * 16) + 2 * 16));
    ImportedModel m = read_llmc(path);
    REQUIRE(m.model_vocab == 300);
    REQUIRE(m.ck.config.n_layer == 2);
    REQUIRE(m.ck.config.n_head == 2);
    REQUIRE(m.ck.config.block_size == 8);
    REQUIRE(m.ck.config.gelu_tanh);
    REQUIRE(m.ck.state.params == ck.state.params);
    // and again: the same bytes
    CHECK_THROWS_WITH(export_llmc(ck, path, false), Catch::Contains("exists: add --force"));
    std::string first = read_bytes(path);
    m.ck.tokenizer = ck.tokenizer;
    forget_files("the llm.c model");  // read above: never written over by the run that read it
    export_llmc(m.ck, path, true);
    REQUIRE(read_bytes(path) == first);

    // damaged: truncated, longer, another magic, a header past the limits
    std::string bad = temp_path("bad.bin");
    write_bytes(bad, first.substr(0, first.size() - 4));
    CHECK_THROWS_WITH(read_llmc(bad), Catch::Contains("(truncated)"));
    write_bytes(bad, first + "x");
    CHECK_THROWS_WITH(read_llmc(bad), Catch::Contains("bytes but it has"));
    std::string other = first;
    other[0] = 0x30;  // 20240328 is the tokenizer's
    write_bytes(bad, other);
    CHECK_THROWS_WITH(read_llmc(bad), Catch::Contains("its magic is"));
    other = first;
    int32_t huge = 1 << 30;
    std::memcpy(&other[4 * 3], &huge, 4);  // vocab_size
    write_bytes(bad, other);
    CHECK_THROWS_WITH(read_llmc(bad), Catch::Contains("not a model Attention Lab opens"));
    write_bytes(bad, "short");
    CHECK_THROWS_WITH(read_llmc(bad), Catch::Contains("shorter than llm.c's 1024-byte header"));
    fs::remove(bad);
    fs::remove(path);
}

TEST_CASE("llm.c export refuses what llm.c does not run", "[gpt2]") {
    Checkpoint ck = random_gpt2(300);
    ck.config.gelu_tanh = false;
    CHECK_THROWS_WITH(export_llmc(ck, temp_path("x.bin"), true), Catch::Contains("exact GELU"));
    ck.config = Config{};  // the lecture's single head
    CHECK_THROWS_WITH(export_llmc(ck, temp_path("x.bin"), true), Catch::Contains("whose layers llm.c does not have"));
}

TEST_CASE("a tokenizer drops only the model's padding rows", "[gpt2]") {
    Checkpoint ck = random_gpt2(384);  // llm.c's padded vocabulary for 300 tokens
    ImportedModel m{ck, 384};
    std::string note;
    attach_tokenizer(m, tokenizer(44), &note);
    REQUIRE(m.model_vocab == 300);
    REQUIRE(note.find("84 padding rows") != std::string::npos);
    ModelLayout from = make_layout(ck.config, 384), to = make_layout(ck.config, 300);
    REQUIRE(m.ck.state.params.size() == to.flat);
    for (size_t t = 0; t < to.info.size(); t++)
        for (size_t i = 0; i < to.info[t].count; i++)
            REQUIRE(m.ck.state.params[to.info[t].offset + i] == ck.state.params[from.info[t].offset + i]);
    ImportedModel small{random_gpt2(200), 200};
    CHECK_THROWS_WITH(attach_tokenizer(small, tokenizer(44), nullptr), Catch::Contains("300 tokens but the model's embedding 200"));
    ImportedModel big{random_gpt2(600), 600};
    CHECK_THROWS_WITH(attach_tokenizer(big, tokenizer(44), nullptr), Catch::Contains("give the tokenizer the model was trained with"));
}

// A safetensors file: the header's JSON, then `data`.
static std::string safetensors(const std::string& header, const std::string& data) {
    uint64_t n = header.size();
    return std::string(reinterpret_cast<const char*>(&n), 8) + header + data;
}

TEST_CASE("a broken or lying Hugging Face file is refused with its reason", "[gpt2]") {
    const std::string path = temp_path("model.safetensors");
    auto refused = [&](const std::string& bytes, const std::string& why) {
        write_bytes(path, bytes);
        INFO(bytes.substr(0, 200));
        CHECK_THROWS_WITH(read_hf_gpt2(path), Catch::Contains(why));
    };
    refused("abc", "shorter than the 8-byte header length");
    refused(std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + "{}", "past the file's end");
    refused(safetensors("[1]", ""), "not a JSON object");
    refused(safetensors(R"({"wte.weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,1000000000000]}})", ""),
            "lies past the file's end");
    refused(safetensors(R"({"wte.weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,8]}})", std::string(8, '\0')),
            "has 8 bytes for shape (2, 2)");
    refused(safetensors(R"({"wte.weight":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", std::string(8, '\0')),
            "is I64");
    refused(safetensors(R"({"wte.weight":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})",
                        std::string(8, '\0')),
            "bad shape");
    refused(safetensors(R"({"wte.weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})", std::string(16, '\0')),
            "no tensor 'wpe.weight'");
    refused(safetensors(R"({"wte.weight":{"dtype":"F32","shape":[2,64],"data_offsets":[0,512]},)"
                        R"("wpe.weight":{"dtype":"F32","shape":[2,64],"data_offsets":[512,1024]}})",
                        std::string(1024, '\0')),
            "no blocks");
    fs::remove(path);
    // the model's own export, read as Hugging Face's after a round through llm.c: wrong sizes named
    CHECK_THROWS_WITH(read_hf_gpt2(temp_path("missing")), Catch::Contains("does not exist"));
}

// [.gpt2-logits]: the logits of the run ATTN_RUN on the tokens ATTN_TOKENS ("1,2,3"), (P, V) float32, written to
// ATTN_LOGITS_OUT, for tests/gpt2_import_test.sh to compare with PyTorch's.
TEST_CASE("an imported run's logits, for the comparison with PyTorch", "[.gpt2-logits]") {
    const char* run = std::getenv("ATTN_RUN");
    const char* toks = std::getenv("ATTN_TOKENS");
    const char* out = std::getenv("ATTN_LOGITS_OUT");
    REQUIRE(run);
    REQUIRE(toks);
    REQUIRE(out);
    Checkpoint ck = load_checkpoint(run);
    REQUIRE(ck.tokenizer);
    std::vector<uint32_t> tokens;
    std::stringstream ss(toks);
    for (std::string t; std::getline(ss, t, ',');) tokens.push_back(uint32_t(std::stoul(t)));
    // a text long enough for the Trainer's splits; its tokens play no part in the logits
    std::string text;
    for (int i = 0; i < 400; i++) text += "The quick brown fox jumps over the lazy dog. ";
    Dataset data = Dataset::from_text(text, "filler", ck.tokenizer);
    Config c = ck.config;
    c.batch_size = 1;
    Trainer tr(test::ctx(), data, c, 0, &ck.state);
    std::vector<float> logits;
    tr.probe(tokens, &logits);
    REQUIRE(logits.size() == tokens.size() * size_t(ck.tokenizer->vocab_size()));
    std::ofstream(out, std::ios::binary).write(reinterpret_cast<const char*>(logits.data()),
                                               std::streamsize(logits.size() * sizeof(float)));
}

TEST_CASE("the GPT-2 fuzzer's seeds are models each reader opens", "[gpt2]") {
    const std::string seeds = std::string(ATTN_FIXTURES) + "/../fuzz/seeds/gpt2/";
    for (const char* name : {"tiny.bin", "tiny_bf16.bin"}) {
        INFO(name);
        ImportedModel m = read_llmc(seeds + name);
        REQUIRE(m.model_vocab == 8);
        REQUIRE(m.ck.config.n_embd == 4);
    }
    // the Hugging Face seed in a folder with a config.json of one head, as the fuzzer reads it
    const std::string dir = temp_path("hf");
    fs::create_directories(dir);
    fs::copy_file(seeds + "tiny.safetensors", dir + "/model.safetensors", fs::copy_options::overwrite_existing);
    write_bytes(dir + "/config.json", R"({"n_head": 1, "activation_function": "gelu_new"})");
    ImportedModel m = read_hf_gpt2(dir);
    REQUIRE(m.model_vocab == 8);
    REQUIRE(m.ck.config.n_head == 1);
    write_bytes(dir + "/config.json", R"({"n_head": 1, "activation_function": "relu"})");
    forget_files("the GPT-2 model");
    CHECK_THROWS_WITH(read_hf_gpt2(dir), Catch::Contains("activation_function 'relu'"));
    fs::remove_all(dir);
}

TEST_CASE("--block-size keeps a model's first positions", "[gpt2]") {
    Checkpoint ck = random_gpt2(300);  // block 8
    ImportedModel m{ck, 300};
    shrink_block(m, 5);
    REQUIRE(m.ck.config.block_size == 5);
    ModelLayout from = make_layout(ck.config, 300), to = make_layout(m.ck.config, 300);
    REQUIRE(m.ck.state.params.size() == to.flat);
    for (size_t t = 0; t < to.info.size(); t++) {
        INFO(to.info[t].name);
        REQUIRE(to.info[t].count == (to.info[t].name == "transformer.wpe.weight" ? 5 * 16 : from.info[t].count));
        for (size_t i = 0; i < to.info[t].count; i++)
            REQUIRE(m.ck.state.params[to.info[t].offset + i] == ck.state.params[from.info[t].offset + i]);
    }
    CHECK_THROWS_WITH(shrink_block(m, 6), Catch::Contains("give 1 to 5"));
    CHECK_THROWS_WITH(shrink_block(m, 0), Catch::Contains("out of range"));
}
