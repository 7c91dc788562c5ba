// Checkpoints: exact resume, atomic writes, and one clear message for every damaged or mismatched file.
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corpus.h"
#include "gpu.h"
#include "train/checkpoint.h"
#include "train/session.h"
#include "train/trainer.h"

using namespace attn;
namespace fs = std::filesystem;

static std::string tmp_path(const std::string& name) { return test::temp_path("ck_" + name); }

static Checkpoint snapshot(Trainer& tr, const RunHistory& h) {
    return {tr.config(), tr.dataset().vocab(), tr.dataset().name(), tr.export_state(), h};
}

TEST_CASE("resuming reproduces the uninterrupted run bit for bit", "[checkpoint]") {
    const Dataset& data = test::shakespeare();
    for (const char* preset : {"single-head", "gpt"}) {
        INFO(preset);
        Config c;
        c.apply_preset(preset);
        int steps = 200;
        if (std::string(preset) == "gpt") {  // the gpt preset's every switch (dropout too), at a small size
            c.n_embd = 32; c.n_head = 4; c.n_layer = 2; c.block_size = 16; c.batch_size = 4; steps = 30;
        }
        std::vector<float> straight;
        {
            Trainer tr(test::ctx(), data, c);
            for (int i = 0; i < 2 * steps; i++) straight.push_back(tr.step().loss);
        }
        std::vector<float> resumed;
        std::string path = tmp_path("resume.safetensors");
        {
            Trainer tr(test::ctx(), data, c);
            RunHistory h;
            for (int i = 0; i < steps; i++) h.step_losses.push_back(tr.step().loss);
            save_checkpoint(path, snapshot(tr, h), tr.model().params_info());
        }
        Checkpoint ck = load_checkpoint(path);
        REQUIRE(ck.state.step == steps);
        REQUIRE(ck.history.step_losses.size() == size_t(steps));
        check_resumable(ck, data.vocab(), &c);
        Trainer tr(test::ctx(), data, ck.config);
        tr.import_state(ck.state);
        resumed = ck.history.step_losses;
        for (int i = 0; i < steps; i++) resumed.push_back(tr.step().loss);
        REQUIRE(resumed == straight);
        // a Session built from the checkpoint (the window's Ctrl+O, --resume: no random initialisation first)
        Session run(test::ctx(), data, ck.config, 1, &ck);
        REQUIRE(run.step_count() == steps);
        REQUIRE(run.history().step_losses.size() == size_t(steps));
        REQUIRE(run.trainer().model().read_params() == ck.state.params);
        for (int i = 0; i < steps; i++) REQUIRE(run.step().result.loss == straight[size_t(steps + i)]);
    }
}

TEST_CASE("damaged and mismatched checkpoints are refused with one clear message", "[checkpoint]") {
    const Dataset& data = test::shakespeare();
    Config c;
    c.apply_preset("single-head");
    Trainer tr(test::ctx(), data, c);
    tr.step();
    std::string good = tmp_path("good.safetensors");
    save_checkpoint(good, snapshot(tr, {}), tr.model().params_info());
    Checkpoint negative = snapshot(tr, {});  // written with a valid checksum, but no run has a step below 0
    negative.state.step = -5;
    std::string neg = tmp_path("negative.safetensors");
    save_checkpoint(neg, negative, tr.model().params_info());
    CHECK_THAT(test::error_of([&] { load_checkpoint(neg); }), Catch::Contains("damaged metadata"));
    std::ifstream in(good, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto write = [](const std::string& p, const std::string& b) { std::ofstream(p, std::ios::binary) << b; return p; };

    CHECK_THAT(test::error_of([&] { load_checkpoint(tmp_path("missing.safetensors")); }), Catch::Contains("does not exist"));
    CHECK_THAT(test::error_of([&] { load_checkpoint(write(tmp_path("trunc.safetensors"), bytes.substr(0, bytes.size() / 2))); }),
               Catch::Contains("corrupted"));
    CHECK_THAT(test::error_of([&] { load_checkpoint(write(tmp_path("tiny.safetensors"), bytes.substr(0, 5))); }),
               Catch::Contains("truncated"));
    std::string flipped = bytes;
    flipped[flipped.size() - 100] ^= 0x10;  // one bit in a tensor
    CHECK_THAT(test::error_of([&] { load_checkpoint(write(tmp_path("flip.safetensors"), flipped)); }), Catch::Contains("corrupted"));
    std::string flipped_header = bytes;
    size_t step_at = flipped_header.find("\"step\":\"1\"");
    REQUIRE(step_at != std::string::npos);
    flipped_header[step_at + 8] = '9';  // a plausible but altered step count
    CHECK_THAT(test::error_of([&] { load_checkpoint(write(tmp_path("fliph.safetensors"), flipped_header)); }), Catch::Contains("corrupted"));
    std::string other = bytes;
    size_t v = other.find("\"version\":\"1\"");
    REQUIRE(v != std::string::npos);
    other[v + 11] = '7';
    CHECK_THAT(test::error_of([&] { load_checkpoint(write(tmp_path("ver.safetensors"), other)); }), Catch::Contains("format version 7"));

    Checkpoint ck = load_checkpoint(good);
    Dataset other_corpus = Dataset::from_text(test::tiny_text(), "tiny");
    CHECK_THAT(test::error_of([&] { check_resumable(ck, other_corpus.vocab(), nullptr); }), Catch::Contains("different vocabulary"));
    std::vector<uint32_t> swapped = ck.vocab;  // as many characters, one of them another
    swapped.back() = 0x263A;
    CHECK_THAT(test::error_of([&] { check_resumable(ck, swapped, nullptr); }),
               Catch::Contains("the same number of characters, " + std::to_string(swapped.size()) + ", but character " +
                               std::to_string(swapped.size())) && Catch::Contains("(U+263A) here"));
    Config bigger = c;
    bigger.n_embd = 64;
    bigger.head_size = 64;
    CHECK_THAT(test::error_of([&] { check_resumable(ck, data.vocab(), &bigger); }),
               Catch::Contains("n_embd 32 but 64 was asked (--n-embd): drop --n-embd to resume"));
    // another preset asked for the whole model: that is the flag to drop (not one the user never gave)
    Config asked_preset = c;
    REQUIRE(asked_preset.apply_preset("layernorm"));
    asked_preset.block_size = c.block_size;
    const std::set<std::string> typed_preset{"--preset"}, typed_both{"--preset", "--n-head"};
    CHECK_THAT(test::error_of([&] { check_resumable(ck, data.vocab(), &asked_preset, &typed_preset); }),
               Catch::Contains("n_head 1 but 4 was asked (--preset layernorm): drop --preset to resume"));
    // the setting's own flag when it was typed too (and when the flags typed are unknown)
    CHECK_THAT(test::error_of([&] { check_resumable(ck, data.vocab(), &asked_preset, &typed_both); }),
               Catch::Contains("was asked (--n-head): drop --n-head to resume"));
    CHECK_THAT(test::error_of([&] { check_resumable(ck, data.vocab(), &asked_preset); }),
               Catch::Contains("was asked (--n-head): drop --n-head to resume"));
    CHECK(test::error_of([&] { check_resumable(ck, data.vocab(), &c); }).empty());

    // a file that cannot be opened says so (as root permissions do not stop reading: nothing to check there)
    if (geteuid() != 0) {
        std::string locked = write(tmp_path("locked.safetensors"), bytes);
        fs::permissions(locked, fs::perms::none);
        CHECK_THAT(test::error_of([&] { load_checkpoint(locked); }), Catch::Contains("cannot read checkpoint"));
        fs::permissions(locked, fs::perms::owner_all);
    }
}

TEST_CASE("a long run's checkpoint, its loss history over 64 MiB of header, reads back", "[checkpoint]") {
    // 3.8 million steps of per-step loss (~18 bytes each in the header): a reader that capped the header at 64 MiB
    // refused these files while the writer kept replacing the last good one with them
    const Dataset& data = test::shakespeare();
    Config c;
    c.apply_preset("bigram");
    Trainer tr(test::ctx(), data, c);
    RunHistory h;
    h.step_losses.resize(3800000);
    for (size_t i = 0; i < h.step_losses.size(); i++) h.step_losses[i] = 4.17f - 1.7f * float(i) / 3.8e6f;
    h.evals.push_back({3799999, 2.46, 2.49, 16814.5});
    std::string path = tmp_path("long.safetensors");
    save_checkpoint(path, snapshot(tr, h), tr.model().params_info());
    REQUIRE(fs::file_size(path) > (64u << 20));
    Checkpoint ck = load_checkpoint(path);
    REQUIRE(ck.history.step_losses.size() == h.step_losses.size());
    CHECK(ck.history.step_losses.back() == h.step_losses.back());
    REQUIRE(ck.history.evals.size() == 1);
    CHECK(ck.history.evals[0].val == 2.49);
    CHECK(ck.history.evals[0].tps == 16814.5);  // the speed measured before it (--metrics of a resumed run)
    fs::remove(path);
}

// Rewrites a checkpoint's header (its history evaluations as `evals`, JSON), with a checksum the reader accepts: the file an
// older build wrote (the checksum: FNV-1a over the header length, the header with 16 zeros in place of the
// checksum, and the tensors, as engine/train/checkpoint.cpp computes it).
static void rewrite_header(const std::string& path, const std::function<void(nlohmann::json&)>& edit);
static void rewrite_evals(const std::string& path, const nlohmann::json& evals) {
    rewrite_header(path, [&](nlohmann::json& header) {
        nlohmann::json& meta = header["__metadata__"];
        nlohmann::json hist = nlohmann::json::parse(meta["history"].get<std::string>());
        hist["evals"] = evals;
        meta["history"] = hist.dump();
    });
}
static void rewrite_header(const std::string& path, const std::function<void(nlohmann::json&)>& edit) {
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    uint64_t hlen = 0;
    std::memcpy(&hlen, bytes.data(), 8);
    std::string data = bytes.substr(8 + hlen);
    nlohmann::json header = nlohmann::json::parse(bytes.substr(8, hlen));
    edit(header);
    header["__metadata__"]["checksum"] = "0000000000000000";
    std::string h = header.dump();
    while (h.size() % 8) h += ' ';
    hlen = h.size();
    auto fnv1a = [](const char* p, size_t n, uint64_t x) {
        for (size_t i = 0; i < n; i++) x = (x ^ uint8_t(p[i])) * 0x100000001b3ull;
        return x;
    };
    uint64_t sum = fnv1a(reinterpret_cast<const char*>(&hlen), 8, 0xcbf29ce484222325ull);
    sum = fnv1a(h.data(), h.size(), sum);
    sum = fnv1a(data.data(), data.size(), sum);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)sum);
    h.replace(h.find("0000000000000000"), 16, hex);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&hlen), 8);
    out << h << data;
}

TEST_CASE("a checkpoint written before tokens/s were kept reads back with tokens/s unknown", "[checkpoint]") {
    const Dataset& data = test::shakespeare();
    Config c;
    c.apply_preset("bigram");
    Trainer tr(test::ctx(), data, c);
    RunHistory h;
    h.step_losses = {4.2f, 4.1f};
    h.evals.push_back({2, 4.05, 4.07, 5000.0});
    std::string path = tmp_path("old_evals.safetensors");
    save_checkpoint(path, snapshot(tr, h), tr.model().params_info());
    // the rewrite itself reads back as written (its checksum is right): 4 values keep their tokens/s
    rewrite_evals(path, nlohmann::json::array({nlohmann::json::array({2, 4.05, 4.07, 1234.5})}));
    Checkpoint ck = load_checkpoint(path);
    REQUIRE(ck.history.evals.size() == 1);
    CHECK(ck.history.evals[0].tps == 1234.5);
    // an older build's [step, train, val]: read, its tokens/s unknown (-1: --metrics writes an empty field)
    rewrite_evals(path, nlohmann::json::array({nlohmann::json::array({2, 4.05, 4.07}),
                                               nlohmann::json::array({100, 3.5, 3.6})}));
    ck = load_checkpoint(path);
    REQUIRE(ck.history.evals.size() == 2);
    CHECK(ck.history.evals[0].step == 2);
    CHECK(ck.history.evals[0].val == 4.07);
    CHECK(ck.history.evals[0].tps == -1.0);
    CHECK(ck.history.evals[1].step == 100);
    CHECK(ck.history.evals[1].train == 3.5);
    CHECK(ck.history.evals[1].tps == -1.0);
    CHECK(ck.state.step == tr.step_count());
    fs::remove(path);
}

TEST_CASE("an evaluation's tokens/s leaves out the warm-up steps, unless only they ran", "[checkpoint]") {
    // the first steps of new programs compile pipelines on a CPU driver: counted in, a new run's first tokens/s
    // read far below the speed that follows
    const Dataset& data = test::shakespeare();
    Config c;
    c.apply_preset("bigram");
    c.eval_interval = 6;
    c.eval_iters = 1;
    Session run(test::ctx(), data, c, 1);
    const double tokens = double(c.batch_size) * c.block_size;
    auto interval = [&](int steps) {
        double warm_s = 0, ordinary_s = 0;
        int warm = 0, ordinary = 0;
        for (int i = 0; i < steps; i++) {
            SessionStep s = run.step();
            (s.result.warmup ? warm_s : ordinary_s) += s.seconds;
            (s.result.warmup ? warm : ordinary)++;
        }
        return std::make_tuple(warm, warm_s, ordinary, ordinary_s);
    };
    run.evaluate();
    auto [warm, warm_s, ordinary, ordinary_s] = interval(6);
    REQUIRE(warm >= 1);  // a new run's first step is a warm-up step
    REQUIRE(ordinary >= 1);
    SessionEval e = run.evaluate();
    CHECK(e.eval.tps == Approx(ordinary * tokens / ordinary_s).epsilon(1e-12));
    CHECK(e.ms_per_step == Approx(1e3 * ordinary_s / ordinary).epsilon(1e-12));
    // new programs (another batch size), evaluated after their first step: that step is the speed there is
    Config bigger = c;
    bigger.batch_size = c.batch_size * 2;
    run.trainer().set_live(bigger);
    std::tie(warm, warm_s, ordinary, ordinary_s) = interval(1);
    REQUIRE(warm == 1);
    REQUIRE(ordinary == 0);
    e = run.evaluate();
    CHECK(e.eval.tps == Approx(2 * tokens / warm_s).epsilon(1e-12));
}

TEST_CASE("a failed save never touches the good checkpoint", "[checkpoint]") {
    const Dataset& data = test::shakespeare();
    Config c;
    c.apply_preset("bigram");
    Trainer tr(test::ctx(), data, c);
    std::string path = tmp_path("keep.safetensors");
    save_checkpoint(path, snapshot(tr, {}), tr.model().params_info());
    auto before = fs::file_size(path);
    tr.step();
    // a full disk: writes past 4 KiB fail (a file size limit, SIGXFSZ ignored as a shell would)
    struct rlimit old_lim, lim;
    getrlimit(RLIMIT_FSIZE, &old_lim);
    lim = old_lim;
    lim.rlim_cur = 4096;
    auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &lim);
    std::string err = test::error_of([&] { save_checkpoint(path, snapshot(tr, {}), tr.model().params_info()); });
    setrlimit(RLIMIT_FSIZE, &old_lim);
    std::signal(SIGXFSZ, old_handler);
    CHECK_THAT(err, Catch::Contains("cannot write the checkpoint") && Catch::Contains("the file there is untouched"));
    REQUIRE(fs::file_size(path) == before);
    REQUIRE(load_checkpoint(path).state.step == 0);
    CHECK_THAT(test::error_of([&] { save_checkpoint("/nonexistent/dir/x.safetensors", snapshot(tr, {}), tr.model().params_info()); }),
               Catch::Contains("cannot write the checkpoint") && Catch::Contains("nothing was written"));
    // never renamed over a folder or a device (as root, /dev/null would become a plain file)
    std::string dir = tmp_path("a_folder");
    fs::create_directories(dir);
    CHECK_THAT(test::error_of([&] { save_checkpoint(dir, snapshot(tr, {}), tr.model().params_info()); }),
               Catch::Contains("it is a folder"));
    std::string fifo = tmp_path("a_fifo");  // a device or pipe (a fifo: if this broke, no real device is replaced)
    fs::remove(fifo);
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_THAT(test::error_of([&] { save_checkpoint(fifo, snapshot(tr, {}), tr.model().params_info()); }),
               Catch::Contains("not a regular file"));
    REQUIRE(fs::is_fifo(fifo));
    fs::remove(fifo);
}

// A preset's config with eval_iters evaluation batches a split.
static Config with_eval_iters(const char* preset, int eval_iters) {
    Config c;
    c.apply_preset(preset);
    c.eval_iters = eval_iters;
    return c;
}

TEST_CASE("an evaluation or sample stopped by the stop check leaves the trainer as it was", "[checkpoint]") {
    const Dataset& data = test::shakespeare();
    const Config c = with_eval_iters("bigram", 6);
    Trainer a(test::ctx(), data, c), b(test::ctx(), data, c);
    int calls = 0;
    b.set_stop_check([&] { return ++calls == 5; });  // stops in the middle of the evaluation (train split, batch 5)
    REQUIRE_THROWS_AS(b.estimate_loss(), Interrupted);
    REQUIRE(calls == 5);
    b.set_stop_check({});
    // the RNG states were put back: the same evaluation and the same training batches as a trainer never stopped
    std::vector<std::pair<int, int>> seen;  // the progress callback: before each of the 2 x 6 batches, in order
    EvalResult ea = a.estimate_loss(), eb = b.estimate_loss([&](int done, int total) { seen.push_back({done, total}); });
    REQUIRE(seen.size() == 12);
    for (int i = 0; i < 12; i++) REQUIRE(seen[i] == std::pair{i, 12});
    REQUIRE(ea.train == eb.train);
    REQUIRE(ea.val == eb.val);
    REQUIRE(a.step().loss == b.step().loss);
    b.set_stop_check([] { return true; });
    REQUIRE_THROWS_AS(b.generate("", 50, 1.0f, 0, 1), Interrupted);
}

// A big model's evaluation batch is cut into submits (seconds each on a CPU): the stop check is asked between them
// too, so quitting does not wait for the batch to end, and the trainer is still as it was.
TEST_CASE("an evaluation is stopped between the submits of one batch", "[checkpoint]") {
    const Dataset& data = test::shakespeare();
    const Config c = with_eval_iters("single-head", 2);
    Trainer a(test::ctx(), data, c), b(test::ctx(), data, c);
    for (Trainer* t : {&a, &b}) {
        t->set_submit_limits(1e-9, 1e-9);  // every step "too long": re-recorded in many submits, evaluation too
        for (int i = 0; i < 5; i++) t->step();  // two warm-up steps (not timed), then two long ones re-record
        REQUIRE(t->step_submits() > 2);
    }
    int calls = 0;
    b.set_stop_check([&] { return ++calls < 0; });  // never stops: counts the questions
    EvalResult ea = a.estimate_loss(), eb = b.estimate_loss();
    REQUIRE(ea.train == eb.train);
    REQUIRE(ea.val == eb.val);
    REQUIRE(calls > 2 * c.eval_iters);  // more than once a batch: between its submits too
    calls = 0;
    int batches = 0;
    b.set_stop_check([&] { return ++calls == 2; });  // the first batch's first submit is done: stop there
    REQUIRE_THROWS_AS(b.estimate_loss([&](int, int) { batches++; }), Interrupted);
    REQUIRE(calls == 2);
    REQUIRE(batches == 1);
    b.set_stop_check({});
    // put back as it was: the same evaluation and the same next step as the trainer never stopped
    ea = a.estimate_loss(), eb = b.estimate_loss();
    REQUIRE(ea.train == eb.train);
    REQUIRE(ea.val == eb.val);
    REQUIRE(a.step().loss == b.step().loss);
}

// What a failed Vulkan call tells the user: what it means and what to try first, the call after it.
TEST_CASE("out-of-memory and device-lost errors say what happened and what to try", "[checkpoint]") {
    auto message = [](VkResult r) -> std::string {
        try {
            attn::vk_fail(r, "vkQueueSubmit(q)", "engine/x.cpp", 1);
        } catch (const attn::DeviceError& e) {
            return e.what();
        }
        return "";
    };
    CHECK(message(VK_ERROR_OUT_OF_DEVICE_MEMORY) ==
          "the GPU ran out of memory (VK_ERROR_OUT_OF_DEVICE_MEMORY in vkQueueSubmit(q)): try a smaller batch size, "
          "block size or model");
    // the driver's memory in RAM (a CPU driver's all): not the GPU's
    CHECK(message(VK_ERROR_OUT_OF_HOST_MEMORY) ==
          "the computer ran out of memory (VK_ERROR_OUT_OF_HOST_MEMORY in vkQueueSubmit(q)): close other programs, or "
          "try a smaller batch size, block size or model");
    CHECK(message(VK_ERROR_DEVICE_LOST).rfind("the GPU device was lost (VK_ERROR_DEVICE_LOST in vkQueueSubmit(q)", 0) == 0);
    CHECK_THROWS_WITH(attn::vk_fail(VK_ERROR_FORMAT_NOT_SUPPORTED, "vkX()", "engine/x.cpp", 7),
                      "vkX() failed with VK_ERROR_FORMAT_NOT_SUPPORTED at engine/x.cpp:7");
}

TEST_CASE("crafted checkpoints with valid checksums are refused for what is wrong in them", "[checkpoint]") {
    const Dataset& data = test::shakespeare();
    Config c;
    c.apply_preset("bigram");
    Trainer tr(test::ctx(), data, c);
    tr.step();
    const auto& layout = tr.model().params_info();
    std::string path = tmp_path("crafted.safetensors");
    auto refused = [&](const std::function<void(Checkpoint&)>& alter) {
        Checkpoint ck = snapshot(tr, {});
        alter(ck);
        save_checkpoint(path, ck, layout);
        return test::error_of([&] { load_checkpoint(path); });
    };
    CHECK_THAT(refused([](Checkpoint& ck) { ck.state.step = INT_MAX; }), Catch::Contains("beyond any run"));
    CHECK_THAT(refused([](Checkpoint& ck) { for (auto& r : ck.state.rng) r = 0; }), Catch::Contains("all-zero random-number state"));
    CHECK_THAT(refused([](Checkpoint& ck) { ck.state.params[3] = std::nanf(""); }),
               Catch::Contains("NaN or Inf in '" + layout[0].name + "'"));
    CHECK_THAT(refused([](Checkpoint& ck) { ck.state.adam_v[5] = -1.0f; }), Catch::Contains("negative AdamW second moment"));
    CHECK(refused([](Checkpoint&) {}).empty());
    // a bigram's time-lapse: no attention (L = NH = 0, so its (S, 0, 0, P, P) tensor is empty and read as such, never
    // by a memcpy to a null pointer: the sanitizer build sees that), and steps only a run can reach
    auto with_timelapse = [](std::vector<int> steps) {
        return [steps](Checkpoint& ck) {
            const int P = 4;
            ck.timelapse.reset({0, 1, 2, 3}, "abcd", 0, 0);
            for (int step : steps) {
                ProbeSnapshot s;
                s.step = step;
                s.char_loss.assign(P - 1, 1.0f);
                s.top_ids.assign(size_t(P) * k_probe_top, 0);
                s.top_p.assign(size_t(P) * k_probe_top, 0.2f);
                ck.timelapse.add(std::move(s));
            }
        };
    };
    CHECK(refused(with_timelapse({0, 1})).empty());
    CHECK(load_checkpoint(path).timelapse.snapshots().size() == 2);
    CHECK_THAT(refused(with_timelapse({INT_MIN, 0})), Catch::Contains("time-lapse snapshot at step -2147483648"));
    CHECK_THAT(refused(with_timelapse({0, 1'000'000'001})), Catch::Contains("outside any run"));

    // header entries of the wrong JSON type: one line naming the tensor, never a JSON library's exception
    const std::string name = layout[0].name;
    auto header_refused = [&](const std::function<void(nlohmann::json&)>& edit) {
        save_checkpoint(path, snapshot(tr, {}), layout);
        rewrite_header(path, edit);
        return test::error_of([&] { load_checkpoint(path); });
    };
    for (const auto& edit : std::vector<std::function<void(nlohmann::json&)>>{
             [&](nlohmann::json& h) { h[name] = 5; },
             [&](nlohmann::json& h) { h[name]["shape"] = "65,65"; },
             [&](nlohmann::json& h) { h[name]["data_offsets"] = "0"; },
             [&](nlohmann::json& h) { h[name].erase("shape"); }})
        CHECK_THAT(header_refused(edit), Catch::Contains("damaged entry for tensor '" + name + "'"));
    CHECK_THAT(header_refused([](nlohmann::json& h) {
                   auto v = nlohmann::json::parse(h["__metadata__"]["vocab"].get<std::string>());
                   v[0] = -1;
                   h["__metadata__"]["vocab"] = v.dump();
               }),
               Catch::Contains("vocabulary entry that is not a Unicode character (-1)"));
    fs::remove(path);
}

TEST_CASE("a GELU model's checkpoint keeps its activation; asking for ReLU on resume is refused", "[checkpoint]") {
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    Config c;
    c.apply_preset("feed-forward");
    c.gelu = true;
    c.block_size = 8;
    c.batch_size = 4;
    Trainer tr(test::ctx(), data, c);
    tr.step();
    std::string path = tmp_path("gelu.safetensors");
    save_checkpoint(path, snapshot(tr, {}), tr.model().params_info());
    Checkpoint ck = load_checkpoint(path);
    CHECK(ck.config.gelu);
    CHECK(test::error_of([&] { check_resumable(ck, data.vocab(), &c); }).empty());
    Config relu = c;
    relu.gelu = false;
    CHECK_THAT(test::error_of([&] { check_resumable(ck, data.vocab(), &relu); }), Catch::Contains("(--activation)"));
}

TEST_CASE("a checkpoint whose AdamW moments are all zero stores the weights alone and reads back the same", "[checkpoint]") {
    const Dataset& data = test::shakespeare();
    Config c;
    c.apply_preset("single-head");
    Trainer fresh(test::ctx(), data, c);  // step 0: no moments yet
    const std::string path = tmp_path("zero_moments.safetensors");
    save_checkpoint(path, snapshot(fresh, {}), fresh.model().params_info());
    const auto bytes_zero = fs::file_size(path);
    Checkpoint ck = load_checkpoint(path);
    REQUIRE(ck.state.params == fresh.export_state().params);
    REQUIRE(ck.state.adam_m == std::vector<float>(ck.state.params.size(), 0.0f));
    REQUIRE(ck.state.adam_v == std::vector<float>(ck.state.params.size(), 0.0f));
    fresh.step();  // moments now: stored, a file of about three times the floats
    save_checkpoint(path, snapshot(fresh, {}), fresh.model().params_info());
    REQUIRE(fs::file_size(path) > bytes_zero + 2 * 4 * fresh.num_params() - 4096);
    Checkpoint ck2 = load_checkpoint(path);
    REQUIRE(ck2.state.adam_m == fresh.export_state().adam_m);
    fs::remove(path);
}
