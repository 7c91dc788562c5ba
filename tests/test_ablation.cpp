// Head ablation by weight surgery against the CPU twin with the heads' output replaced, head lists, head importance,
// loss by position and the in-context learning score.
#include <cmath>
#include <cstdlib>

#include "corpus.h"
#include "gpu.h"
#include "reference/model_ref.h"
#include "train/session.h"

using namespace attn;

namespace {

Config small(const char* preset) {
    Config c;
    c.apply_preset(preset);
    c.n_head = 2;
    c.n_embd = 16;
    c.head_size = 0;
    c.block_size = 8;
    c.batch_size = 4;
    c.eval_iters = 3;
    c.seed = 11;
    if (c.n_layer > 2) c.n_layer = 2;
    return c;
}

// The GPU's logits for `tokens` (P,) at the trainer's weights, and the CPU twin's at `flat` with head (l, h)'s
// output replaced by `value` (hs,) at every position: they must agree.
void check_against_twin(Trainer& tr, const std::vector<uint32_t>& tokens, const std::vector<float>& flat, HeadId id,
                        const std::vector<double>& value) {
    const Config& c = tr.config();
    std::vector<float> gpu;
    tr.probe(tokens, &gpu);
    std::vector<double> twin;
    std::vector<uint32_t> toks = tokens;
    toks.push_back(0);
    const int HS = c.hs(), A = c.attn_dim(), T = c.block_size;
    ref::model_loss(tr.model(), test::to_d(flat), toks, {0}, 1, nullptr, {0, 0}, &twin, [&](int l, ref::Vec& y) {
        if (l != id.layer) return;
        for (int t = 0; t < T; t++)
            for (int d = 0; d < HS; d++) y[size_t(t) * A + size_t(id.head) * HS + d] = value[size_t(d)];
    });
    const int V = tr.model().vocab_size();
    double worst = 0;
    for (size_t t = 0; t < tokens.size(); t++)
        for (int v = 0; v < V; v++) worst = std::max(worst, std::abs(gpu[t * V + v] - twin[t * V + v]));
    CHECK(worst < 1e-3);
}

}  // namespace

TEST_CASE("head lists are LAYER:HEAD from 1; bad ones say what to write", "[ablation]") {
    auto heads = parse_head_list("1:2, 2:1,1:2", 2, 4);
    REQUIRE(heads.size() == 2);
    CHECK(heads[0] == HeadId{0, 1});
    CHECK(heads[1] == HeadId{1, 0});
    CHECK(head_list_text(heads) == "L1 H2, L2 H1");
    CHECK(test::error_of([] { parse_head_list("", 2, 4); }).find("no head given") != std::string::npos);
    CHECK(test::error_of([] { parse_head_list("1:2,,2:1", 2, 4); }).find("an empty item") != std::string::npos);
    CHECK(test::error_of([] { parse_head_list("12", 2, 4); }).find("is not a head") != std::string::npos);
    CHECK(test::error_of([] { parse_head_list("1:x", 2, 4); }).find("is not a head") != std::string::npos);
    CHECK(test::error_of([] { parse_head_list("0:1", 2, 4); }).find("out of range: the model has layers 1 to 2 and heads 1 to 4") !=
          std::string::npos);
    CHECK(test::error_of([] { parse_head_list("2:5", 2, 4); }).find("out of range") != std::string::npos);
    CHECK(test::error_of([] { parse_head_list("1:1", 0, 0); }).find("no attention") != std::string::npos);
}

TEST_CASE("the in-context learning score: early loss minus the last tenth's", "[ablation]") {
    std::vector<double> curve(100);
    for (int t = 0; t < 100; t++) curve[size_t(t)] = 3.0 - t / 100.0;  // falling: later positions predicted better
    // positions 5..15 around 10 (mean 2.90), the last ten 90..99 (mean 2.055)
    CHECK(icl_score(curve) == Approx(2.90 - 2.055).margin(1e-12));
    CHECK(icl_score(std::vector<double>(8, 2.0)) == Approx(0.0));
}

TEST_CASE("a head knocked out by weight surgery equals the twin with its output replaced", "[ablation]") {
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    std::vector<uint32_t> probe = data.encode("to be or");
    // single-head (the mean folds into lm_head's bias), feed-forward (into the first layer's), residual (into the
    // output projection's), a nanoGPT block with biases (into the value bias)
    for (const char* preset : {"single-head", "feed-forward", "residual", "nanogpt-char"}) {
        Config c = small(preset);
        if (std::string(preset) == "nanogpt-char") c.bias = true, c.dropout = 0;
        INFO(preset);
        Trainer tr(test::ctx(), data, c, 1);
        for (int i = 0; i < 15; i++) tr.step();
        const HeadId id{c.n_layer - 1, 1};
        std::vector<float> w = tr.model().read_params();
        Trainer::FixedEval fx = tr.evaluate_fixed(3, 5, false, true);
        REQUIRE(fx.head_means.size() == size_t(c.n_layer) * c.attn_dim());
        // zero
        tr.write_params(ablate_weights(w, tr.model().layout(), c, {id}, AblationMode::Zero));
        check_against_twin(tr, probe, w, id, std::vector<double>(size_t(c.hs()), 0.0));
        // mean
        std::vector<double> m(fx.head_means.begin() + long(size_t(id.layer) * c.attn_dim() + size_t(id.head) * c.hs()),
                              fx.head_means.begin() + long(size_t(id.layer) * c.attn_dim() + size_t(id.head + 1) * c.hs()));
        tr.write_params(ablate_weights(w, tr.model().layout(), c, {id}, AblationMode::Mean, fx.head_means));
        check_against_twin(tr, probe, w, id, m);
        // the intact model is untouched by either
        tr.write_params(w);
        CHECK(tr.evaluate_fixed(3, 5, false, false).loss == fx.loss);
    }
    // a model with no bias after its heads cannot be mean-ablated, and says so
    Config c = small("single-head");
    c.n_layer = 2;
    ModelLayout layout = make_layout(c, data.vocab_size());
    std::vector<float> flat(layout.flat, 0.5f);
    std::vector<double> means(size_t(2) * c.attn_dim(), 0.1);
    CHECK(test::error_of([&] { ablate_weights(flat, layout, c, {{0, 0}}, AblationMode::Mean, means); })
              .find("use zero ablation") != std::string::npos);
}

TEST_CASE("every head knocked out of a one-layer model leaves lm_head's bias alone", "[ablation]") {
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    Config c = small("single-head");
    c.eval_iters = 2;
    Session run(test::ctx(), data, c, 1);
    for (int i = 0; i < 15; i++) run.step();
    std::vector<uint32_t> probe = data.encode("to be or");
    Session::Ablation a = run.ablate(-1, parse_head_list("1:1,1:2", 1, 2), AblationMode::Zero, probe, "to be or");
    CHECK(a.step == 15);
    CHECK(a.val_ablated > a.val_intact);
    // without attention the logits are lm_head's bias at every position: -log softmax(b)[next]
    const Model& model = run.trainer().model();
    std::vector<float> flat = run.trainer().read_params();
    const ParamInfo& b = model.params_info()[size_t(model.layout().lm_b)];
    const int V = data.vocab_size();
    double mx = -1e30, sum = 0;
    for (int v = 0; v < V; v++) mx = std::max(mx, double(flat[b.offset + size_t(v)]));
    for (int v = 0; v < V; v++) sum += std::exp(flat[b.offset + size_t(v)] - mx);
    for (size_t t = 0; t + 1 < probe.size(); t++)
        CHECK(a.ablated.char_loss[t] == Approx(-(flat[b.offset + probe[t + 1]] - mx - std::log(sum))).margin(1e-4));
    // the live weights are back: the same loss as before
    CHECK(run.trainer().evaluate_fixed(run.fixed_batches(), Session::k_fixed_seed, false, false).loss == a.val_intact);
    // a sample with no head out is the model's own; with both out, another text; the live weights stay
    std::string own = run.sample("", 40, 7).text;
    CHECK(run.sample_ablated(-1, {}, AblationMode::Zero, "", 40, 7).text == own);
    CHECK(run.sample_ablated(-1, parse_head_list("1:1,1:2", 1, 2), AblationMode::Zero, "", 40, 7).text != own);
    CHECK(run.sample("", 40, 7).text == own);
}

TEST_CASE("head importance: a head already zero matters 0; loss by position averages to the loss", "[ablation]") {
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    Config c = small("residual");
    c.eval_interval = 5;
    Session run(test::ctx(), data, c, 1);
    while (run.step_count() < 10) {
        if (run.evaluation_due()) run.evaluate();
        run.step();
    }
    // knock head L1 H2 out for good: its importance is then exactly 0, the others' are not all 0
    Trainer& tr = run.trainer();
    tr.write_params(ablate_weights(tr.read_params(), tr.model().layout(), c, {{0, 1}}, AblationMode::Zero));
    int used = -1;
    std::vector<double> imp = run.head_importance(-1, AblationMode::Zero, &used);
    REQUIRE(imp.size() == size_t(c.n_layer * c.n_head));
    CHECK(used == 10);
    CHECK(imp[1] == 0.0);
    CHECK(std::abs(imp[0]) + std::abs(imp[2]) + std::abs(imp[3]) > 0);
    // at a recorded step: one curve a snapshot, whose mean is that step's fixed-batch loss
    std::vector<std::vector<double>> curves = run.loss_by_position();
    REQUIRE(curves.size() == run.timelapse().snapshots().size());
    for (size_t i = 0; i < curves.size(); i++) {
        REQUIRE(curves[i].size() == size_t(c.block_size));
        double mean = 0;
        for (double v : curves[i]) mean += v / c.block_size;
        Session::Ablation none = run.ablate(run.timelapse().snapshots()[i].step, {}, AblationMode::Zero, {0, 1}, "");
        CHECK(mean == Approx(none.val_intact).margin(1e-5));
    }
}

// For tests/torch_interop_test.sh: a small trained residual model's parameters, a text and the induction probes, the
// head scores computed here from the fp32 maps (the functions the app uses), and the probe's loss intact and with
// head L1 H2 knocked out (zero, mean), written to $ATTN_EXPORT_PATH; bench/reference.py circuits recomputes them all
// in PyTorch. Hidden: run by that script only.
TEST_CASE("export head scores and ablated losses for PyTorch", "[.circuits-export]") {
    const char* path = std::getenv("ATTN_EXPORT_PATH");
    REQUIRE(path);
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    Config c = small("residual");
    Trainer tr(test::ctx(), data, c, 1);
    for (int i = 0; i < 30; i++) tr.step();
    const int L = c.n_layer, NH = c.n_head, T = c.block_size, A = c.attn_dim();
    std::vector<uint32_t> text = data.encode("to be or");
    std::vector<std::vector<uint32_t>> probes;
    for (int k = 0; k < k_induction_probes; k++)
        probes.push_back(induction_probe(data.vocab(), T, k_induction_probe_seed + uint64_t(k)));
    // scores on fp32 maps: (L * NH, 5) previous, duplicate, induction (mean over the probes), first, current
    std::vector<float> att, scores;
    tr.probe(text, nullptr, &att);
    const size_t per = text.size() * text.size();
    std::vector<std::vector<float>> probe_att(probes.size());
    for (size_t k = 0; k < probes.size(); k++) tr.probe(probes[k], nullptr, &probe_att[k]);
    for (int m = 0; m < L * NH; m++) {
        std::vector<float> a(att.begin() + long(m * per), att.begin() + long((m + 1) * per));
        double ind = 0;
        for (size_t k = 0; k < probes.size(); k++) {
            size_t pp = probes[k].size() * probes[k].size();
            ind += induction_score(std::vector<float>(probe_att[k].begin() + long(m * pp),
                                                      probe_att[k].begin() + long((m + 1) * pp)), probes[k]);
        }
        for (double v : {previous_score(a, int(text.size())), duplicate_score(a, text), ind / double(probes.size()),
                         first_score(a, int(text.size())), current_score(a, int(text.size()))})
            scores.push_back(float(v));
    }
    // the probe's mean loss: intact, L1 H2 zero-ablated, mean-ablated (means over 3 fixed batches)
    std::vector<float> w = tr.model().read_params();
    Trainer::FixedEval fx = tr.evaluate_fixed(3, 5, false, true);
    auto probe_loss = [&] { return float(tr.probe(text).mean_loss()); };
    std::vector<float> losses{probe_loss()};
    tr.write_params(ablate_weights(w, tr.model().layout(), c, {{0, 1}}, AblationMode::Zero));
    losses.push_back(probe_loss());
    tr.write_params(ablate_weights(w, tr.model().layout(), c, {{0, 1}}, AblationMode::Mean, fx.head_means));
    losses.push_back(probe_loss());
    tr.write_params(w);

    std::vector<std::pair<std::string, std::vector<float>>> tensors;
    std::vector<std::vector<int>> shapes;
    for (const auto& pi : tr.model().params_info()) {
        tensors.emplace_back(pi.name, std::vector<float>(w.begin() + long(pi.offset), w.begin() + long(pi.offset + pi.count)));
        shapes.push_back(pi.shape);
    }
    auto as_floats = [](const std::vector<uint32_t>& v) { return std::vector<float>(v.begin(), v.end()); };
    tensors.emplace_back("circuits.text", as_floats(text));
    shapes.push_back({int(text.size())});
    std::vector<float> all_probes;
    for (const auto& p : probes) all_probes.insert(all_probes.end(), p.begin(), p.end());
    tensors.emplace_back("circuits.induction", all_probes);
    shapes.push_back({int(probes.size()), int(probes[0].size())});
    tensors.emplace_back("circuits.scores", scores);
    shapes.push_back({L * NH, 5});
    tensors.emplace_back("circuits.losses", losses);
    shapes.push_back({3});
    tensors.emplace_back("circuits.head_means", std::vector<float>(fx.head_means.begin(), fx.head_means.end()));
    shapes.push_back({L, A});
    char info[512];
    std::snprintf(info, sizeof info,
                  "{\"preset\":\"%s\",\"vocab_size\":%d,\"block_size\":%d,\"n_embd\":%d,\"n_head\":%d,\"head_size\":%d,"
                  "\"n_layer\":%d,\"ffn\":%s,\"residual\":%s,\"layernorm\":%s,\"bigram\":false,\"loss\":0,"
                  "\"ablated\":[0,1]}",
                  c.preset.c_str(), data.vocab_size(), c.block_size, c.n_embd, c.n_head, c.hs(), c.n_layer,
                  c.ffn ? "true" : "false", c.residual ? "true" : "false", c.layernorm ? "true" : "false");
    save_tensors(path, tensors, shapes, info);
}
