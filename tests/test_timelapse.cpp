// The attention time-lapse: fp16 storage, the schedule, thinning within the budget, head summaries, the probe
// against the CPU twin, recorded snapshots against a fresh forward, and checkpoints with and without a time-lapse.
#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>

#include "corpus.h"
#include "gpu.h"
#include "reference/model_ref.h"
#include "train/session.h"

using namespace attn;
namespace fs = std::filesystem;

static std::string tmp_path(const std::string& name) { return test::temp_path("tl_" + name); }

TEST_CASE("fp16 storage rounds to nearest even and reads back", "[timelapse]") {
    CHECK(float_to_half(0.0f) == 0x0000);
    CHECK(float_to_half(1.0f) == 0x3c00);
    CHECK(float_to_half(0.5f) == 0x3800);
    CHECK(float_to_half(-2.0f) == 0xc000);
    CHECK(float_to_half(65504.0f) == 0x7bff);
    CHECK(float_to_half(1e6f) == 0x7c00);              // too large: Inf
    CHECK(float_to_half(std::ldexp(1.0f, -24)) == 1);  // the smallest subnormal
    CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);  // a tie: to even (down)
    CHECK(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);  // a tie: to even (up)
    int mismatched = 0;  // every finite half reads back to itself
    for (uint32_t h = 0; h < 0x7c00; h++) mismatched += float_to_half(half_to_float(uint16_t(h))) != h;
    CHECK(mismatched == 0);
    for (int i = 0; i <= 1000; i++) {  // attention weights: within half a unit of the last place (10 bits)
        float f = i / 1000.0f, back = half_to_float(float_to_half(f));
        CHECK(std::abs(back - f) <= std::ldexp(f, -11) + std::ldexp(1.0f, -25));
    }
}

TEST_CASE("the time-lapse records at least eight steps a decade: 0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, ...",
          "[timelapse]") {
    std::vector<int> due;
    for (int s = 0; s <= 1000; s++)
        if (timelapse_due(s)) due.push_back(s);
    CHECK(due == std::vector<int>{0,  1,  2,  3,  4,  5,   6,   8,   10,  12,  15,  20,  25,  30,  40,
                                  50, 60, 80, 100, 120, 150, 200, 250, 300, 400, 500, 600, 800, 1000});
    for (int decade = 1; decade <= 100000; decade *= 10) {
        int n = 0;
        for (int s = decade == 1 ? 0 : decade; s < decade * 10; s++) n += timelapse_due(s);
        CHECK(n >= 8);
    }
    CHECK(timelapse_due(25000));
    CHECK_FALSE(timelapse_due(70000));
    CHECK_FALSE(timelapse_due(-1));
    // the lecture's 5000 steps, evaluated every 500: more than 30 snapshots
    CHECK(timelapse_expected(5000, 500) > 30);
    CHECK(timelapse_expected(0, 500) == 1);
}

TEST_CASE("weights are kept in fp32 while a run's snapshots fit the budget, else in bf16", "[timelapse]") {
    CHECK(float_to_bf16(1.0f) == 0x3f80);
    CHECK(bf16_to_float(float_to_bf16(-2.5f)) == -2.5f);
    CHECK(float_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);      // a tie: to even (down)
    CHECK(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);  // a tie: to even (up)
    CHECK(std::isnan(bf16_to_float(float_to_bf16(NAN))));
    // the lecture presets (the layernorm preset's 3 blocks: under 50 k weights) stay fp32; the gpt preset's
    // 10.8 M weights at 40 snapshots do not fit, and its bf16 weights and views keep at least 12 snapshots
    const int expected = timelapse_expected(5000, 500);
    TimeLapse small;
    small.plan(50'000, expected);
    CHECK_FALSE(small.weights_bf16());
    TimeLapse gpt;
    gpt.plan(10'800'000, expected);
    CHECK(gpt.weights_bf16());
    const size_t gpt_view = size_t(6) * 6 * 256 * 256 * 2 + 256 * (4 + 2 * 4 * k_probe_top);
    CHECK(TimeLapse::k_default_budget / (size_t(10'800'000) * 2 + gpt_view) >= 12);
    // over budget in fp32: every kept weight goes to bf16 before any snapshot is thinned
    TimeLapse tl;
    tl.reset(std::vector<uint32_t>(4, 1), "abcd", 1, 1);
    tl.set_budget(3 * 1000 * 4);
    ProbeSnapshot s;
    for (int step : {0, 1, 2}) {
        s.step = step;
        tl.add(s, std::vector<float>(1000, 0.5f + step));
    }
    CHECK(tl.weights_bf16());
    CHECK(tl.snapshots().size() == 3);
    CHECK(tl.thinned() == 0);
    REQUIRE(tl.has_weights());
    CHECK(tl.weights(2).is_bf16());
    CHECK(tl.weights(2).values() == std::vector<float>(1000, 2.5f));
}

// A snapshot of the gpt preset's size (6 layers x 6 heads, T 256) with made-up numbers.
static ProbeSnapshot fake_snapshot(int step, int L, int NH, int P) {
    ProbeSnapshot s;
    s.step = step;
    s.att.assign(size_t(L) * NH * P * P, float_to_half(0.25f));
    s.char_loss.assign(size_t(P - 1), 1.0f);
    s.top_ids.assign(size_t(P) * k_probe_top, 0);
    s.top_p.assign(size_t(P) * k_probe_top, 0.2f);
    return s;
}

TEST_CASE("thinning keeps the first and last snapshots within the budget, the gpt preset's included", "[timelapse]") {
    const int L = 6, NH = 6, P = 256;  // the gpt preset: about 4.7 MB a snapshot in fp16
    TimeLapse tl;
    tl.reset(std::vector<uint32_t>(P, 1), std::string(P, 'a'), L, NH);
    tl.set_budget(size_t(64) << 20);  // the views alone: 14 snapshots
    for (int step = 0; step <= 5000; step++)
        if (timelapse_due(step) || step % 500 == 0) tl.add(fake_snapshot(step, L, NH, P));
    CHECK(tl.bytes() <= tl.budget());
    CHECK(tl.snapshots().size() >= 10);
    CHECK(tl.snapshots().front().step == 0);
    CHECK(tl.snapshots().back().step == 5000);
    CHECK(tl.thinned() > 0);
    // kept in step order, and early steps stay denser than late ones
    for (size_t i = 1; i < tl.snapshots().size(); i++) CHECK(tl.snapshots()[i - 1].step < tl.snapshots()[i].step);
    CHECK(tl.snapshots()[1].step < 100);
    // the single-head preset's 5000 steps fit with nothing thinned
    TimeLapse small;
    small.reset(std::vector<uint32_t>(8, 1), "abcdefgh", 1, 1);
    for (int step = 0; step <= 5000; step++)
        if (timelapse_due(step) || step % 500 == 0) small.add(fake_snapshot(step, 1, 1, 8));
    CHECK(small.thinned() == 0);
    CHECK(small.bytes() < 64 * 1024);
    // nearest and truncate
    CHECK(small.nearest(480)->step == 500);
    CHECK(small.nearest(7)->step == 6);
    // distances that do not fit an int: a step of INT_MIN (a crafted file) is the farthest from 0, not the nearest
    TimeLapse far;
    far.reset(std::vector<uint32_t>(8, 1), "abcdefgh", 1, 1);
    for (int step : {INT_MIN, 0, 10}) far.add(fake_snapshot(step, 1, 1, 8));
    CHECK(far.nearest(0)->step == 0);
    CHECK(far.nearest(INT_MAX)->step == 10);
    CHECK(far.nearest(INT_MIN + 1)->step == INT_MIN);
    small.truncate_after(1000);
    CHECK(small.snapshots().back().step == 1000);
}

TEST_CASE("head summaries name what a head clearly does", "[timelapse]") {
    const int P = 8;
    auto head = [&](auto weight) {  // causal rows, normalised
        std::vector<float> a(P * P, 0.0f);
        for (int i = 0; i < P; i++) {
            double sum = 0;
            for (int j = 0; j <= i; j++) sum += weight(i, j);
            for (int j = 0; j <= i; j++) a[i * P + j] = float(weight(i, j) / sum);
        }
        return a;
    };
    HeadSummary prev = summarize_head(head([](int i, int j) { return j == i - 1 || (i == 0) ? 1.0 : 0.0; }), P, true);
    CHECK(prev.label == "previous character");
    CHECK(prev.mean_distance == Approx(7.0 / 8));
    HeadSummary uni = summarize_head(head([](int, int) { return 1.0; }), P, true);
    CHECK(uni.label == "uniform");
    CHECK(uni.uniformity == Approx(1.0));
    double want = 0;
    for (int i = 0; i < P; i++) want += std::log(i + 1.0);
    CHECK(uni.entropy == Approx(want / P));
    ProbeSnapshot two;  // two uniform heads: the mean over heads and rows is one head's
    for (int h = 0; h < 2; h++)
        for (float w : head([](int, int) { return 1.0; })) two.att.push_back(float_to_half(w));
    CHECK(mean_attention_entropy(two, P, 1, 2) == Approx(want / P).epsilon(1e-3));
    CHECK(summarize_head(head([](int, int j) { return j == 0 ? 1.0 : 0.0; }), P, true).label == "first character");
    CHECK(summarize_head(head([](int i, int j) { return i == j ? 1.0 : 0.0; }), P, true).label == "current character");
    CHECK(summarize_head(head([](int i, int j) { return j == i || j == i - 1 ? 1.0 : 0.01; }), P, true).label == "");
}

static Config tiny_config() {
    Config c;
    c.apply_preset("single-head");
    c.n_head = 2;
    c.n_embd = 16;
    c.head_size = 8;
    c.block_size = 8;
    c.batch_size = 4;
    c.seed = 7;
    return c;
}

TEST_CASE("a probe's losses and top-5 match the CPU twin's softmax", "[timelapse]") {
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    Config c = tiny_config();
    Trainer tr(test::ctx(), data, c, 1);
    for (int i = 0; i < 20; i++) tr.step();
    std::vector<uint32_t> probe = data.encode("to be or");  // 8 characters: the whole block
    std::vector<float> logits;
    ProbeSnapshot s = tr.probe(probe, &logits);
    int P = int(probe.size()), V = data.vocab_size();
    REQUIRE(s.char_loss.size() == size_t(P - 1));
    // the twin on the same sequence: its logits (1, T, V)
    std::vector<double> flat = test::to_d(tr.model().read_params()), twin;
    std::vector<uint32_t> toks = probe;
    toks.push_back(0);
    ref::model_loss(tr.model(), flat, toks, {0}, 1, nullptr, {0, 0}, &twin);
    double mean = 0;
    for (int t = 0; t + 1 < P; t++) {
        const double* row = twin.data() + size_t(t) * V;
        double mx = *std::max_element(row, row + V), sum = 0;
        for (int v = 0; v < V; v++) sum += std::exp(row[v] - mx);
        double want = -(row[probe[t + 1]] - mx - std::log(sum));
        CHECK(s.char_loss[t] == Approx(want).margin(1e-4));
        mean += want;
    }
    CHECK(s.mean_loss() == Approx(mean / (P - 1)).margin(1e-4));
    for (int t = 0; t < P; t++) {  // top-5 of a CPU softmax over the GPU's logits
        std::vector<double> p(V);
        double mx = *std::max_element(logits.begin() + t * V, logits.begin() + (t + 1) * V), sum = 0;
        for (int v = 0; v < V; v++) sum += p[v] = std::exp(logits[t * V + v] - mx);
        std::vector<int> order(V);
        for (int v = 0; v < V; v++) order[v] = v;
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
        for (int k = 0; k < k_probe_top; k++) {
            CHECK(s.top_ids[t * k_probe_top + k] == order[k]);
            CHECK(s.top_p[t * k_probe_top + k] == Approx(p[order[k]] / sum).margin(1e-6));
        }
        for (int v = 0; v < V; v++) CHECK(std::abs(logits[t * V + v] - twin[size_t(t) * V + v]) < 1e-3);
    }
    // attention rows are causal distributions
    for (int h = 0; h < c.n_head; h++)
        for (int i = 0; i < P; i++) {
            double sum = 0;
            for (int j = 0; j < P; j++) {
                float a = s.att_at(P, c.n_head, 0, h, i, j);
                if (j > i) CHECK(a == 0.0f);
                sum += a;
            }
            CHECK(sum == Approx(1.0).margin(2e-3));
        }
}

TEST_CASE("a probe shorter than the block runs at its own length, as generation does at its own", "[timelapse]") {
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    Config c = tiny_config();  // block 8
    Trainer tr(test::ctx(), data, c, 1);
    for (int i = 0; i < 20; i++) tr.step();
    std::vector<uint32_t> full = data.encode("to be or"), prefix(full.begin(), full.begin() + 5);
    std::vector<float> lf, lp;
    ProbeSnapshot f = tr.probe(full, &lf), p = tr.probe(prefix, &lp);
    int V = data.vocab_size(), P = 5, T = 8;
    REQUIRE(p.att.size() == size_t(c.n_head) * P * P);
    REQUIRE(p.char_loss.size() == size_t(P - 1));
    // causal: the prefix's positions see only the prefix, whatever follows it in the block
    for (int t = 0; t + 1 < P; t++) CHECK(p.char_loss[t] == Approx(f.char_loss[t]).margin(1e-5));
    for (int t = 0; t < P; t++)
        for (int v = 0; v < V; v++) CHECK(lp[size_t(t) * V + v] == Approx(lf[size_t(t) * V + v]).margin(1e-5));
    for (int h = 0; h < c.n_head; h++)
        for (int i = 0; i < P; i++)
            for (int j = 0; j < P; j++)
                CHECK(p.att_at(P, c.n_head, 0, h, i, j) == Approx(f.att_at(T, c.n_head, 0, h, i, j)).margin(1e-3));
    // generation runs on 2^k positions: greedy (top-k 1) picks the probe's likeliest next character, for contexts of
    // 3 (4 positions) and 5 (the whole block of 8)
    for (int n : {3, 5}) {
        std::vector<uint32_t> ctx(full.begin(), full.begin() + n), ids;
        std::vector<float> logits;
        ProbeSnapshot s = tr.probe(ctx, &logits);
        tr.generate(data.decode(ctx), 1, 1.0f, 1, 7, &ids);
        REQUIRE(ids.size() == 1);
        CHECK(int(ids[0]) == s.top_ids[size_t(n - 1) * k_probe_top]);
    }
}

TEST_CASE("a recorded snapshot equals a fresh forward with that step's weights, and checkpoints carry it",
          "[timelapse][checkpoint]") {
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    Config c = tiny_config();
    c.eval_interval = 5;
    c.eval_iters = 2;
    Session run(test::ctx(), data, c, 1);
    while (run.step_count() < 12) {
        if (run.evaluation_due()) run.evaluate();
        run.step();
    }
    const TimeLapse& tl = run.timelapse();
    std::vector<int> steps;
    for (const auto& s : tl.snapshots()) steps.push_back(s.step);
    CHECK(steps == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 8, 10});
    // step 10's weights, saved then (the same schedule: estimate_loss draws its train batches from the training
    // RNG, as the lecture's get_batch does), give the same bits as the snapshot recorded at step 10
    std::string path = tmp_path("ten.safetensors");
    Session again(test::ctx(), data, c, 1);
    while (again.step_count() < 10) {
        if (again.evaluation_due()) again.evaluate();
        again.step();
    }
    again.save(path);
    Checkpoint ck = load_checkpoint(path);
    Trainer fresh(test::ctx(), data, c, 1);
    fresh.import_state(ck.state);
    ProbeSnapshot now = fresh.probe(tl.tokens());
    const ProbeSnapshot& rec = *tl.nearest(10);
    REQUIRE(rec.step == 10);
    CHECK(now.att == rec.att);
    CHECK(now.char_loss == rec.char_loss);
    CHECK(now.top_ids == rec.top_ids);
    CHECK(now.top_p == rec.top_p);
    // the checkpoint holds the time-lapse of its run up to step 8 (10 is recorded at the next step or evaluation)
    REQUIRE(!ck.timelapse.empty());
    CHECK(ck.timelapse.text() == tl.text());
    CHECK(ck.timelapse.tokens() == tl.tokens());
    REQUIRE(ck.timelapse.snapshots().size() == 8);
    for (size_t i = 0; i < 8; i++) {
        CHECK(ck.timelapse.snapshots()[i].step == tl.snapshots()[i].step);
        CHECK(ck.timelapse.snapshots()[i].att == tl.snapshots()[i].att);
        CHECK(ck.timelapse.snapshots()[i].top_p == tl.snapshots()[i].top_p);
    }
    // resumed, the run goes on recording into it
    Session resumed(test::ctx(), data, c, 1, &ck);
    CHECK(resumed.resume_note().empty());
    CHECK(resumed.timelapse().snapshots().size() == 8);
    resumed.step();
    CHECK(resumed.timelapse().snapshots().back().step == 10);
    CHECK(resumed.timelapse().snapshots().back().att == rec.att);
    // a checkpoint from before time-lapses (or an imported one): one step, its own weights, and the resume says so
    Checkpoint old = ck;
    old.timelapse = TimeLapse();
    save_checkpoint(path, old, fresh.model().params_info());
    Checkpoint back = load_checkpoint(path);
    CHECK(back.timelapse.empty());
    Session from_old(test::ctx(), data, c, 1, &back);
    CHECK(from_old.resume_note().find("it holds one step, the checkpoint's own weights at step 10") != std::string::npos);
    REQUIRE(from_old.timelapse().snapshots().size() == 1);
    CHECK(from_old.timelapse().snapshots()[0].step == 10);
    CHECK(from_old.timelapse().has_weights());
    fs::remove(path);
}

TEST_CASE("a probe is its last block_size characters, those the corpus lacks in place with no loss", "[timelapse]") {
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    Config c = tiny_config();
    Session run(test::ctx(), data, c, 1);
    CHECK(run.timelapse().text() == Session::default_probe(data, c.block_size));
    std::string note = run.set_probe("to be? or not to be");
    CHECK(note.find("?") == std::string::npos);  // cut off with the rest
    CHECK(note.find("its last 8 characters") != std::string::npos);
    CHECK(run.timelapse().text() == "ot to be");
    // an unknown character keeps its place: fed as a space, marked, its loss NaN and left out of the mean
    note = run.set_probe("be?or");
    CHECK(note.find("not in the corpus, marked in place and given no loss: ?") != std::string::npos);
    const TimeLapse& tl = run.timelapse();
    REQUIRE(tl.length() == 5);
    CHECK(tl.text() == "be?or");
    CHECK(tl.tokens()[2] == data.encode(" ")[0]);
    CHECK(probe_unknown(tl.tokens(), tl.text(), data.vocab()) == std::vector<uint8_t>{0, 0, 1, 0, 0});
    CHECK(probe_chars(tl.tokens(), tl.text(), data.vocab())[2] == "?");
    const ProbeSnapshot& s = run.record_probe();
    REQUIRE(s.char_loss.size() == 4);
    CHECK(std::isnan(s.char_loss[1]));  // predicting position 2, the '?'
    CHECK(std::isfinite(s.char_loss[0]));
    CHECK(std::isfinite(s.char_loss[2]));
    CHECK(s.mean_loss() == Approx((double(s.char_loss[0]) + s.char_loss[2] + s.char_loss[3]) / 3));
    // a known text's characters are its tokens' own
    CHECK(probe_unknown(data.encode("to be"), "to be", data.vocab()) == std::vector<uint8_t>(5, 0));
    CHECK(test::error_of([&] { run.set_probe("???"); }).find("no character of the corpus") != std::string::npos);
    CHECK(test::error_of([&] { run.set_probe(""); }).find("the probe is empty") != std::string::npos);
    CHECK(run.set_probe("to be").empty());
    CHECK(run.timelapse().length() == 5);
    CHECK(run.record_probe().char_loss.size() == 4);
}

TEST_CASE("any text at any recorded step: views and samples from that step's weights", "[timelapse][checkpoint]") {
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    Config c = tiny_config();
    c.eval_interval = 5;
    c.eval_iters = 2;
    Session run(test::ctx(), data, c, 1);
    while (run.step_count() < 12) {
        if (run.evaluation_due()) run.evaluate();
        run.step();
    }
    const std::vector<ProbeSnapshot> first = run.timelapse().snapshots();
    const std::string first_text = run.timelapse().text();
    REQUIRE(run.timelapse().has_weights());
    CHECK_FALSE(run.timelapse().weights_bf16());
    // a text typed after training: one view per recorded step, the weights and steps kept
    std::string other = "be or no";
    CHECK(run.set_probe(other).empty());
    const TimeLapse& tl = run.timelapse();
    REQUIRE(tl.snapshots().size() == first.size());
    CHECK(tl.text() == other);
    for (size_t i = 0; i < first.size(); i++) CHECK(tl.snapshots()[i].step == first[i].step);
    // step 10's view of it equals a fresh forward at the weights a checkpoint saved at step 10 holds
    std::string path = tmp_path("any.safetensors");
    Session again(test::ctx(), data, c, 1);
    while (again.step_count() < 10) {
        if (again.evaluation_due()) again.evaluate();
        again.step();
    }
    again.save(path);
    Checkpoint ck = load_checkpoint(path);
    Trainer fresh(test::ctx(), data, c, 1);
    fresh.import_state(ck.state);
    std::vector<uint32_t> tokens = data.encode(other);
    ProbeSnapshot now = fresh.probe(tokens);
    const ProbeSnapshot& at10 = *tl.nearest(10);
    REQUIRE(at10.step == 10);
    CHECK(now.att == at10.att);
    CHECK(now.char_loss == at10.char_loss);
    CHECK(now.top_p == at10.top_p);
    ProbeSnapshot direct = run.view_at(10, tokens);
    CHECK(direct.step == 10);
    CHECK(direct.att == at10.att);
    // the live weights are back: the run's next step is the one it would have taken
    std::vector<float> live = run.trainer().read_params();
    CHECK(live == run.checkpoint().state.params);
    const ProbeSnapshot other_at8 = *tl.nearest(8);
    // switching back gives the first probe's views, bit for bit
    run.set_probe(first_text);
    REQUIRE(run.timelapse().snapshots().size() == first.size());
    for (size_t i = 0; i < first.size(); i++) {
        CHECK(run.timelapse().snapshots()[i].att == first[i].att);
        CHECK(run.timelapse().snapshots()[i].top_ids == first[i].top_ids);
    }
    // samples with one seed: the same at one step, different between the first and the last
    SessionSample s0 = run.sample_at(0, "", 40, 7), s0b = run.sample_at(0, "", 40, 7), s10 = run.sample_at(10, "", 40, 7);
    CHECK(s0.step == 0);
    CHECK(s0.text == s0b.text);
    CHECK(s0.text != s10.text);
    // the checkpoint carries the weights: a resumed run replays a new text at its steps
    REQUIRE(ck.timelapse.has_weights());
    // (built from the checkpoint, no random weights first: the same weights, the whole time-lapse)
    Session resumed(test::ctx(), data, c, 1, &ck);
    CHECK(resumed.resume_note().empty());
    CHECK(resumed.trainer().read_params() == ck.state.params);
    CHECK(resumed.step_count() == ck.state.step);
    REQUIRE(resumed.timelapse().snapshots().size() == ck.timelapse.snapshots().size());
    CHECK(resumed.trainer().probe(tokens).att == now.att);
    resumed.set_probe(other);
    REQUIRE(resumed.timelapse().snapshots().size() == ck.timelapse.snapshots().size());
    CHECK(resumed.timelapse().nearest(8)->att == other_at8.att);
    // a checkpoint of the previous format (views only): shown as it was; another text cannot be replayed, and says so
    Checkpoint old = ck;
    TimeLapse views_only;
    views_only.reset(ck.timelapse.tokens(), ck.timelapse.text(), ck.timelapse.n_layer(), ck.timelapse.n_head());
    for (const auto& snap : ck.timelapse.snapshots()) views_only.add(snap);
    old.timelapse = views_only;
    save_checkpoint(path, old, fresh.model().params_info());
    Checkpoint back = load_checkpoint(path);
    CHECK_FALSE(back.timelapse.has_weights());
    CHECK(back.timelapse.snapshots().size() == ck.timelapse.snapshots().size());
    Session from_old(test::ctx(), data, c, 1, &back);
    CHECK(test::error_of([&] { from_old.view_at(5, tokens); }).find("without its weights") != std::string::npos);
    CHECK(from_old.set_probe(other).find("cannot be replayed") != std::string::npos);
    fs::remove(path);
}

TEST_CASE("bf16 weights replay a view within a bound of the fp32 one", "[timelapse]") {
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    Config c = tiny_config();
    Session run(test::ctx(), data, c, 1);
    Session half(test::ctx(), data, c, 1);
    half.set_history_budget(1);  // nothing fits in fp32: bf16 from the first snapshot
    for (int i = 0; i < 12; i++) run.step(), half.step();
    REQUIRE(half.timelapse().weights_bf16());
    std::vector<uint32_t> tokens = data.encode("be or no");
    double worst = 0;
    for (int step : {0, 5, 10}) {
        ProbeSnapshot a = run.view_at(step, tokens), b = half.view_at(step, tokens);
        for (size_t k = 0; k < a.att.size(); k++)
            worst = std::max(worst, double(std::abs(half_to_float(a.att[k]) - half_to_float(b.att[k]))));
    }
    INFO("largest attention difference, bf16 against fp32 weights: " << worst);
    CHECK(worst < 0.05);  // docs/timelapse.md states this bound
}

TEST_CASE("the default probe is a whole line of the validation split, or whole words", "[timelapse]") {
    // the validation split starts mid-line; its lines are of several lengths
    std::string text = std::string(900, 'a') + "\nxyz end of a line\nTo be, or not\nshort\n" +
                       "a line far longer than any block of these\nmore\n";
    Dataset data = Dataset::from_text(text, "lines");
    std::string val = data.decode(std::vector<uint32_t>(data.tokens().begin() + long(data.n_train()), data.tokens().end()));
    for (int T : {4, 8, 13, 16, 32, 64}) {
        std::string p = Session::default_probe(data, T);
        INFO("block " << T << ": \"" << p << "\"");
        REQUIRE(!p.empty());
        CHECK(int(p.size()) <= T);
        size_t at = val.find(p);
        REQUIRE(at != std::string::npos);
        CHECK((at == 0 || val[at - 1] == '\n' || val[at - 1] == ' '));  // never from the middle of a word
        char after = at + p.size() < val.size() ? val[at + p.size()] : '\n';
        CHECK((after == '\n' || after == ' ' || int(p.size()) == T));  // nor to the middle of one (but a long word)
    }
    CHECK(Session::default_probe(data, 13) == "To be, or not");
    CHECK(Session::default_probe(data, 8) == "short");
}
