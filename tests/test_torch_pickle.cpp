// PyTorch checkpoints read without PyTorch (engine/io/torch_pickle.h): the fixtures tests/fixtures/ holds were
// written by torch.save and pickle.dump (make_torch_fixtures.py); crafted pickles below must be refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "corpus.h"
#include "io/torch_pickle.h"
#include "vk/check.h"

using namespace attn;
using namespace attn::torch_io;

// A byte string from a literal, NULs included.
template <size_t N>
static std::string bin(const char (&s)[N]) { return std::string(s, N - 1); }

using test::fixture;

static ValuePtr must(const ValuePtr& v, const char* what) {
    INFO(what);
    REQUIRE(v != nullptr);
    return v;
}

TEST_CASE("a torch.save checkpoint in nanoGPT's layout is read as torch wrote it", "[torch]") {
    for (const char* name : {"nanogpt_bias.pt", "nanogpt_nobias_compiled.pt"}) {
        bool bias = std::string(name) == "nanogpt_bias.pt";
        std::string prefix = bias ? "" : "_orig_mod.";
        TorchFile f(fixture(name));
        const ValuePtr& root = f.root();
        REQUIRE(root->kind == Value::Kind::Dict);
        auto args = must(root->get("model_args"), "model_args");
        CHECK(must(args->get("n_layer"), "n_layer")->i == 1);
        CHECK(must(args->get("n_head"), "n_head")->i == 2);
        CHECK(must(args->get("n_embd"), "n_embd")->i == 8);
        CHECK(must(args->get("block_size"), "block_size")->i == 8);
        CHECK(must(args->get("vocab_size"), "vocab_size")->i == 5);
        CHECK(must(args->get("bias"), "bias")->b == bias);
        CHECK(must(args->get("dropout"), "dropout")->f == 0.0);
        CHECK(must(root->get("iter_num"), "iter_num")->i == 250);
        auto best = must(root->get("best_val_loss"), "best_val_loss");
        REQUIRE(best->kind == Value::Kind::Tensor);
        CHECK(best->tensor.shape.empty());
        CHECK(f.values(best->tensor)[0] == Approx(1.4697).epsilon(1e-6));

        auto model = must(root->get("model"), "model");
        auto wte = must(model->get(prefix + "transformer.wte.weight"), "wte");
        auto head = must(model->get(prefix + "lm_head.weight"), "lm_head");
        REQUIRE(wte->kind == Value::Kind::Tensor);
        CHECK(wte->tensor.shape == std::vector<int64_t>{5, 8});
        CHECK(head->tensor.storage == wte->tensor.storage);  // tied: one storage
        auto w = f.values(wte->tensor);
        REQUIRE(w.size() == 40);
        for (size_t k = 0; k < w.size(); k++) CHECK(w[k] == Approx(float(k) * 0.01f).margin(1e-7));
        auto attn = must(model->get(prefix + "transformer.h.0.attn.c_attn.weight"), "c_attn");
        CHECK(attn->tensor.shape == std::vector<int64_t>{24, 8});  // (3C, C): q, k, v rows
        CHECK(f.values(attn->tensor)[8 * 23 + 7] == Approx(float(191) * 0.001f).margin(1e-7));
        CHECK((model->get(prefix + "transformer.h.0.mlp.c_fc.bias") != nullptr) == bias);

        auto opt = must(root->get("optimizer"), "optimizer");
        auto state = must(opt->get("state"), "state");
        REQUIRE(state->kind == Value::Kind::Dict);
        REQUIRE(!state->dict.empty());
        CHECK(state->dict[0].first->kind == Value::Kind::Int);  // keyed by parameter index
        auto s0 = state->dict[0].second;
        CHECK(f.values(must(s0->get("exp_avg_sq"), "exp_avg_sq")->tensor)[0] == 0.25);
        auto groups = must(opt->get("param_groups"), "param_groups");
        REQUIRE(groups->kind == Value::Kind::List);
        auto betas = must(groups->items[0]->get("betas"), "betas");
        REQUIRE(betas->kind == Value::Kind::Tuple);
        CHECK(betas->items[1]->f == 0.99);
    }
}

TEST_CASE("views, element types and plain values come out in their logical order", "[torch]") {
    TorchFile f(fixture("views.pt"));
    const ValuePtr& r = f.root();
    auto t = must(r->get("t"), "t");  // ramp(3, 4).t(): shape (4, 3), stride (1, 4)
    CHECK(t->tensor.shape == std::vector<int64_t>{4, 3});
    CHECK(t->tensor.stride == std::vector<int64_t>{1, 4});
    auto tv = f.values(t->tensor);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) CHECK(tv[size_t(i * 3 + j)] == Approx(float(j * 4 + i) * 0.01f).margin(1e-7));
    auto slice = must(r->get("slice"), "slice");  // ramp(3, 4)[1]: offset 4 into the same storage
    CHECK(slice->tensor.offset == 4);
    CHECK(f.values(slice->tensor)[3] == Approx(0.07).margin(1e-7));
    auto half = f.values(must(r->get("half"), "half")->tensor);
    REQUIRE(half.size() == 6);
    for (size_t k = 0; k < 6; k++) CHECK(half[k] == double(k) * 0.25);
    auto dbl = f.values(must(r->get("double"), "double")->tensor);
    CHECK(dbl[5] == 2.5);
    auto lng = f.values(must(r->get("long"), "long")->tensor);
    CHECK(lng == std::vector<double>{-2, -1, 0, 1});
    CHECK(f.values(must(r->get("scalar"), "scalar")->tensor) == std::vector<double>{2.5});
    auto nested = must(r->get("nested"), "nested");
    REQUIRE(nested->kind == Value::Kind::List);
    REQUIRE(nested->items.size() == 8);
    CHECK(nested->items[0]->i == 1);
    CHECK(nested->items[1]->i == -70000);
    CHECK(nested->items[2]->i == (int64_t(1) << 40));
    CHECK(nested->items[3]->f == 1.5);
    CHECK(nested->items[4]->s == "s");
    CHECK(nested->items[5]->kind == Value::Kind::None);
    CHECK(nested->items[6]->b);
    CHECK(nested->items[7]->kind == Value::Kind::Tuple);
}

TEST_CASE("nanoGPT's meta.pkl (pickle protocol 4) gives the character vocabulary", "[torch]") {
    std::string bytes;
    {
        FILE* fp = std::fopen(fixture("meta.pkl").c_str(), "rb");
        REQUIRE(fp);
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, fp)) > 0) bytes.append(buf, n);
        std::fclose(fp);
    }
    CHECK(static_cast<unsigned char>(bytes[1]) >= 4);  // written with protocol 4 (FRAME, MEMOIZE, ...)
    ValuePtr meta = unpickle(bytes, "meta.pkl");
    CHECK(must(meta->get("vocab_size"), "vocab_size")->i == 5);
    auto itos = must(meta->get("itos"), "itos");
    REQUIRE(itos->dict.size() == 5);
    CHECK(itos->dict[0].first->i == 0);
    CHECK(itos->dict[0].second->s == "\n");
    CHECK(itos->dict[4].second->s == "\xC3\xA9");  // é, UTF-8
    auto stoi = must(meta->get("stoi"), "stoi");
    CHECK(must(stoi->get("b"), "stoi b")->i == 3);
}

TEST_CASE("a pickle naming any other Python object is refused and nothing runs", "[torch]") {
    namespace fs = std::filesystem;
    fs::remove("attnlab_pwned");
    try {
        TorchFile f(fixture("evil.pt"));
        FAIL("evil.pt was accepted");
    } catch (const Error& e) {
        std::string m = e.what();
        INFO(m);
        CHECK(m.find("posix.system") != std::string::npos);
        CHECK(m.find("refused") != std::string::npos);
        CHECK(m.find('\n') == std::string::npos);
    }
    CHECK(!fs::exists("attnlab_pwned"));
}

TEST_CASE("malformed pickles and archives are refused with one line", "[torch]") {
    auto refused = [](const std::string& bytes, const char* want) {
        try {
            unpickle(bytes, "x.pkl", true);
            FAIL_CHECK("accepted: " << want);
        } catch (const Error& e) {
            std::string m = e.what();
            INFO(m);
            CHECK(m.find(want) != std::string::npos);
            CHECK(m.find("x.pkl") == 0);
        }
    };
    refused(bin("\x80\x02]"), "ends early");                               // no STOP
    refused(bin("\x80\x02]q\x00h\x00" "a."), "inside itself");              // a list appended to itself
    refused(bin("\x80\x02]q\x00]h\x00" "a" "0h\x00" "]a."), "changed after");  // a placed list changed afterwards
    refused(bin("\x80\x02h\x05."), "before it was stored");
    refused("\x80\x02\x8f.", "opcode 0x8f");                           // EMPTY_SET
    refused("\x80\x02" "cos\nsystem\n.", "os.system");
    refused("\x80\x02" "cbuiltins\neval\n.", "builtins.eval");
    refused("\x80\x02K\x01K\x02.", "left over");
    std::string deep = "\x80\x02";
    for (int k = 0; k < 100; k++) deep += "]";
    for (int k = 0; k < 99; k++) deep += "a";
    refused(deep + ".", "nested too deep");
    refused("\x80\x09.", "protocol 9");
    // a storage must not escape a tensor: ('storage', torch.FloatStorage, '0', 'cpu', 4) alone
    refused(bin("\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x00" "0X\x03\x00\x00\x00"
                "cpuK\x04tQ."),
            "storage outside");
    // a tensor reaching past its storage: _rebuild_tensor_v2(storage of 4, 2, (3,), (1,), False, OrderedDict())
    refused(bin("\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
                "X\x01\x00\x00\x00" "0X\x03\x00\x00\x00" "cpuK\x04tQK\x02K\x03\x85K\x01\x85\x89"
                "ccollections\nOrderedDict\n)RtR."),
            "past its storage");
    // a view whose last element is 2^24 * 2^40 away (an int64 overflow before it was checked): refused, no UB
    refused(bin("\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
                "X\x01\x00\x00\x00" "0X\x03\x00\x00\x00" "cpuK\x04tQK\x00J\x00\x00\x00\x01K\x02\x86"
                "\x8a\x06\x00\x00\x00\x00\x00\x01K\x01\x86\x89" "ccollections\nOrderedDict\n)RtR."),
            "past its storage");
    // more values than a file of its size holds: 100,000 one-byte integers (two bytes each) in a list
    std::string wide = "\x80\x02](";
    for (int k = 0; k < 100000; k++) wide += bin("K\x07");
    refused(wide + "e.", "more values than");
    CHECK_THROWS_AS(TorchFile(fixture("meta.pkl")), Error);  // a pickle, not a zip
    CHECK_THROWS_AS(TorchFile(fixture("no_such.pt")), Error);
}

TEST_CASE("a key given twice keeps its first place and its last value, in linear time", "[torch]") {
    // {"a": 1, "b": 2, "a": 3} -> {"a": 3, "b": 2}, as Python's dict
    ValuePtr d = unpickle(bin("\x80\x02}(X\x01\x00\x00\x00" "aK\x01X\x01\x00\x00\x00" "bK\x02X\x01\x00\x00\x00" "aK\x03u."), "d.pkl");
    REQUIRE(d->dict.size() == 2);
    CHECK(d->dict[0].first->s == "a");
    CHECK(d->dict[0].second->i == 3);
    CHECK(d->get("b")->i == 2);
    // 200,000 distinct keys: a reader that scanned for duplicates would make 2e10 comparisons
    std::string many = "\x80\x02}(";
    for (int k = 0; k < 200000; k++) {
        std::string key = "k" + std::to_string(k);
        many += 'X';
        for (int b = 0; b < 4; b++) many += char((key.size() >> (8 * b)) & 255);
        many += key + "J" + std::string(reinterpret_cast<const char*>(&k), 4);
    }
    ValuePtr big = unpickle(many + "u.", "many.pkl");
    CHECK(big->dict.size() == 200000);
    CHECK(big->get("k199999")->i == 199999);
}

TEST_CASE("a checkpoint written without PyTorch reads back as written", "[torch]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("attn_torch_write_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::string path = (dir / "ckpt.pt").string();
    TorchWriter w;
    std::vector<float> wte(5 * 8);
    for (size_t k = 0; k < wte.size(); k++) wte[k] = float(k) * 0.01f;
    ValuePtr t = w.tensor(wte, {5, 8});
    ValuePtr empty = w.tensor({}, {0});
    ValuePtr root = dict({
        {"model", dict({{"transformer.wte.weight", t}, {"lm_head.weight", t}, {"empty", empty}})},
        {"model_args", dict({{"n_layer", integer(1)}, {"bias", boolean(false)}, {"dropout", real(0.2)}})},
        {"iter_num", integer(5000)},
        {"big", integer(int64_t(1) << 40)},
        {"neg", integer(-70000)},
        {"betas", tuple({real(0.9), real(0.99)})},
        {"params", list({integer(0), integer(1)})},
        {"none", none()},
        {"name", str("shakespeare_char \xC3\xA9")},
    });
    w.save(path, "the exported checkpoint", root, "ckpt");

    TorchFile f(path);
    const ValuePtr& r = f.root();
    auto model = must(r->get("model"), "model");
    auto a = must(model->get("transformer.wte.weight"), "wte"), b = must(model->get("lm_head.weight"), "lm_head");
    CHECK(a->tensor.shape == std::vector<int64_t>{5, 8});
    CHECK(a->tensor.stride == std::vector<int64_t>{8, 1});
    CHECK(a->tensor.storage == b->tensor.storage);  // tied: one storage
    auto v = f.values(a->tensor);
    REQUIRE(v.size() == wte.size());
    for (size_t k = 0; k < v.size(); k++) CHECK(v[k] == double(wte[k]));
    CHECK(f.values(must(model->get("empty"), "empty")->tensor).empty());
    auto args = must(r->get("model_args"), "model_args");
    CHECK(must(args->get("n_layer"), "n_layer")->i == 1);
    CHECK(!must(args->get("bias"), "bias")->b);
    CHECK(must(args->get("dropout"), "dropout")->f == 0.2);
    CHECK(must(r->get("iter_num"), "iter_num")->i == 5000);
    CHECK(must(r->get("big"), "big")->i == (int64_t(1) << 40));
    CHECK(must(r->get("neg"), "neg")->i == -70000);
    CHECK(must(r->get("betas"), "betas")->items[1]->f == 0.99);
    CHECK(must(r->get("params"), "params")->items.size() == 2);
    CHECK(must(r->get("none"), "none")->kind == Value::Kind::None);
    CHECK(must(r->get("name"), "name")->s == "shakespeare_char \xC3\xA9");
    // the plain pickle of a meta.pkl reads back too
    ValuePtr meta = unpickle(pickle(dict({{"vocab_size", integer(65)}})), "meta.pkl");
    CHECK(must(meta->get("vocab_size"), "vocab_size")->i == 65);
    fs::remove_all(dir);
}

// For tests/torch_interop_test.sh: a checkpoint written here, then read by PyTorch's torch.load.
TEST_CASE("write a checkpoint for torch.load", "[.torch-export]") {
    const char* path = std::getenv("ATTN_EXPORT_PATH");
    REQUIRE(path);
    TorchWriter w;
    std::vector<float> wte(5 * 8), wpe(8 * 8);
    for (size_t k = 0; k < wte.size(); k++) wte[k] = float(k) * 0.01f;
    for (size_t k = 0; k < wpe.size(); k++) wpe[k] = 1.0f - float(k) * 0.5f;
    ValuePtr t = w.tensor(wte, {5, 8});
    ValuePtr root = dict({
        {"model", dict({{"transformer.wte.weight", t}, {"transformer.wpe.weight", w.tensor(wpe, {8, 8})},
                        {"lm_head.weight", t}})},
        {"model_args", dict({{"n_layer", integer(1)}, {"n_head", integer(2)}, {"n_embd", integer(8)},
                             {"block_size", integer(8)}, {"bias", boolean(false)}, {"vocab_size", integer(5)},
                             {"dropout", real(0.2)}})},
        {"iter_num", integer(5000)},
        {"best_val_loss", w.tensor({1.4697f}, {})},
        {"config", dict({{"dataset", str("shakespeare_char")}, {"betas", tuple({real(0.9), real(0.99)})}})},
    });
    w.save(path, "the exported checkpoint", root, "ckpt");
    std::string meta_path = std::string(path) + ".meta.pkl";
    FILE* fp = std::fopen(meta_path.c_str(), "wb");
    REQUIRE(fp);
    std::string bytes = pickle(dict({{"vocab_size", integer(5)}, {"stoi", dict({{"a", integer(2)}, {"\n", integer(0)}})}}));
    std::fwrite(bytes.data(), 1, bytes.size(), fp);
    std::fclose(fp);
}

TEST_CASE("a refused file leaves no file descriptor open", "[torch]") {
    auto open_fds = [] {
        size_t n = 0;
        for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) n++;
        return n;
    };
    size_t before = open_fds();
    for (int i = 0; i < 200; i++) {
        CHECK_THROWS_AS(TorchFile(fixture("meta.pkl")), Error);     // opened, then refused: not a zip
        CHECK_THROWS_AS(TorchFile(fixture("size_lie.pt")), Error);  // refused past the central directory
    }
    CHECK(open_fds() <= before + 1);  // (the directory listing's own descriptor may be counted)
}
