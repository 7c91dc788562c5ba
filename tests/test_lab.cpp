// The self-attention lab's demos assert the lecture's numbers: the trick, softmax, scaling, encoder, position, batches.
#include "corpus.h"
#include "gpu.h"
#include "lab/lab_model.h"
#include "lab/lab_registry.h"
#include "lab/lab_trick.h"
#include "lab/torch_generator.h"

using namespace attn;
using namespace attn::lab;
using test::download;

static void require_matrix(const Matrix& got, int rows, int cols, const std::vector<float>& want) {
    REQUIRE(got.rows == rows);
    REQUIRE(got.cols == cols);
    for (size_t i = 0; i < want.size(); i++) {
        INFO("element " << i);
        CHECK(got.v[i] == Approx(want[i]).epsilon(1e-6));  // small integers and halves exact, thirds to rounding
    }
}

TEST_CASE("lab kernels match plain-loop CPU references on odd shapes", "[lab]") {
    Rng r(11);
    const uint32_t NB = 3, M = 7, N = 5, K = 13;
    auto a = test::randn(r, NB * M * K), b = test::randn(r, NB * K * N), bt = test::randn(r, NB * N * K);
    auto ga = test::upload(a), gb = test::upload(b), gbt = test::upload(bt);
    auto c1 = test::zeros(NB * M * N), c2 = test::zeros(NB * M * N), c3 = test::zeros(NB * M * N);
    const uint32_t TS = 9, ROWS = 2 * TS;  // two (9, 9) score matrices for the causal softmax
    auto s = test::randn(r, ROWS * TS, 2.0);
    auto gs = test::upload(s), sm = test::zeros(ROWS * TS), smc = test::zeros(ROWS * TS), w = test::zeros(TS * TS);
    auto xb_in = test::randn(r, NB * M * N);
    auto gx = test::upload(xb_in), xb = test::zeros(NB * M * N);
    test::run([&](Program& p) {
        lab::matmul(test::kernels(), p, c1, ga, gb, NB, M, N, K, M * K, K * N, false);          // batched a @ b
        lab::matmul(test::kernels(), p, c2, ga, gbt, NB, M, N, K, M * K, N * K, true, 0.5f);     // a @ b^T * 0.5
        lab::matmul(test::kernels(), p, c3, ga, gb, NB, M, N, K, 0, K * N, false);              // a broadcast
        lab::softmax(test::kernels(), p, sm, gs, ROWS, TS, false, 3.0f);
        lab::softmax(test::kernels(), p, smc, gs, ROWS, TS, true, 1.0f);
        lab::xbow(test::kernels(), p, xb, gx, NB, M, N);
        lab::tril(test::kernels(), p, w, TS, TrilMode::TrilAverage);
    });
    std::vector<double> r1(NB * M * N), r2(NB * M * N), r3(NB * M * N), rx(NB * M * N);
    for (uint32_t q = 0; q < NB; q++)
        for (uint32_t m = 0; m < M; m++)
            for (uint32_t n = 0; n < N; n++) {
                double s1 = 0, s2 = 0, s3 = 0, sx = 0;
                for (uint32_t k = 0; k < K; k++) {
                    s1 += a[(q * M + m) * K + k] * b[(q * K + k) * N + n];
                    s2 += a[(q * M + m) * K + k] * bt[(q * N + n) * K + k];
                    s3 += a[m * K + k] * b[(q * K + k) * N + n];
                }
                for (uint32_t t = 0; t <= m; t++) sx += xb_in[(q * M + t) * N + n];
                size_t i = (q * M + m) * N + n;
                r1[i] = s1; r2[i] = 0.5 * s2; r3[i] = s3; rx[i] = sx / (m + 1);
            }
    std::vector<double> rs(ROWS * TS), rsc(ROWS * TS), rw(TS * TS);
    for (uint32_t row = 0; row < ROWS; row++) {
        uint32_t t = row % TS;
        double mx = -1e300, mxc = -1e300, sum = 0, sumc = 0;
        for (uint32_t j = 0; j < TS; j++) mx = std::max(mx, 3.0 * s[row * TS + j]);
        for (uint32_t j = 0; j <= t; j++) mxc = std::max(mxc, s[row * TS + j]);
        for (uint32_t j = 0; j < TS; j++) sum += std::exp(3.0 * s[row * TS + j] - mx);
        for (uint32_t j = 0; j <= t; j++) sumc += std::exp(s[row * TS + j] - mxc);
        for (uint32_t j = 0; j < TS; j++) {
            rs[row * TS + j] = std::exp(3.0 * s[row * TS + j] - mx) / sum;
            rsc[row * TS + j] = j <= t ? std::exp(s[row * TS + j] - mxc) / sumc : 0.0;
        }
    }
    for (uint32_t i = 0; i < TS; i++)
        for (uint32_t j = 0; j < TS; j++) rw[i * TS + j] = j <= i ? 1.0 / (i + 1) : 0.0;
    test::require_close(download(c1, NB * M * N), r1, 1e-5, 1e-5, "lab_matmul");
    test::require_close(download(c2, NB * M * N), r2, 1e-5, 1e-5, "lab_matmul trans_b scaled");
    test::require_close(download(c3, NB * M * N), r3, 1e-5, 1e-5, "lab_matmul broadcast");
    test::require_close(download(sm, ROWS * TS), rs, 1e-6, 1e-5, "lab_softmax");
    test::require_close(download(smc, ROWS * TS), rsc, 0, 1e-5, "lab_softmax causal (masked entries exactly 0)");
    test::require_close(download(xb, NB * M * N), rx, 1e-6, 1e-5, "lab_xbow");
    test::require_close(download(w, TS * TS), rw, 0, 1e-7, "lab_tril average");
}

TEST_CASE("lab registry lists the eight demos, each explained", "[lab]") {
    std::vector<std::string> names;
    for (const auto& d : demos()) {
        names.push_back(d.name);
        CHECK(!d.title.empty());
        CHECK(d.explanation.size() > 100);
    }
    CHECK(names ==
          std::vector<std::string>{"matmul", "average", "softmax", "scaling", "encoder", "position", "batches", "graph"});
    CHECK(find_demo("softmax") != nullptr);
    CHECK(find_demo("nope") == nullptr);
}

TEST_CASE("lab matmul: ones, tril and the row-normalised tril give the lecture's c exactly", "[lab]") {
    MatmulDemoInput in;
    in.a_mode = TrilMode::Ones;
    MatmulDemo d = run_matmul_demo(test::ctx(), test::kernels(), in);
    require_matrix(d.a, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 1});
    // the lecture's b: torch.manual_seed(42); torch.randint(0, 10, (3, 2)) (PyTorch 1.13, checked)
    require_matrix(d.b, 3, 2, {2, 7, 6, 4, 6, 5});
    require_matrix(d.c, 3, 2, {14, 16, 14, 16, 14, 16});
    in.a_mode = TrilMode::Tril;
    d = run_matmul_demo(test::ctx(), test::kernels(), in);
    require_matrix(d.a, 3, 3, {1, 0, 0, 1, 1, 0, 1, 1, 1});
    require_matrix(d.c, 3, 2, {2, 7, 8, 11, 14, 16});
    in.a_mode = TrilMode::TrilAverage;
    d = run_matmul_demo(test::ctx(), test::kernels(), in);
    require_matrix(d.c, 3, 2, {2, 7, 4, 5.5f, 14.0f / 3, 16.0f / 3});  // the lecture's printed c
    in.b = Matrix(2, 1, {1, 3});  // an edited b changes c
    d = run_matmul_demo(test::ctx(), test::kernels(), in);
    require_matrix(d.c, 2, 1, {1, 2});
}

TEST_CASE("torch_randn gives PyTorch's torch.randn after torch.manual_seed", "[lab]") {
    // PyTorch 1.13 (CPU, float32): torch.manual_seed(s); torch.randn(n), its first and last values; to 1e-5 (its AVX2
    // build's vectorised log and cos differ from std::log and std::cos by a few ulp)
    auto check = [](uint32_t seed, size_t n, std::vector<float> head, std::vector<float> tail) {
        INFO("seed " << seed << ", n " << n);
        std::optional<std::vector<float>> x = torch_randn(seed, n);
        REQUIRE(x);
        REQUIRE(x->size() == n);
        for (size_t i = 0; i < head.size(); i++) CHECK((*x)[i] == Approx(head[i]).epsilon(1e-5));
        for (size_t i = 0; i < tail.size(); i++) CHECK((*x)[n - tail.size() + i] == Approx(tail[i]).epsilon(1e-5));
    };
    check(1337, 64, {0.180771589f, -0.0699880943f, -0.359623492f, -0.915204465f}, {1.53326881f, 1.60973644f, -0.403228134f});
    check(1337, 16, {0.180771589f, -0.0699880943f}, {-0.23977837f, -0.921114683f, 1.54329705f});
    check(42, 105, {1.92691529f, 1.48728406f, 0.900717199f, -2.10552096f}, {4.03563404f, 1.27945864f, -0.0126854787f});  // a last partial block
    check(0, 16, {-1.12583983f, -1.1523602f}, {});
    CHECK_FALSE(torch_randn(1337, 15));      // under 16 PyTorch draws another way
    // nn.Linear(32, 16, bias=False) weights after torch.manual_seed(1337); torch.randn(4, 8, 32): key's first, value's last
    TorchGenerator g(1337);
    REQUIRE(g.randn(4 * 8 * 32));
    std::vector<float> wk = g.linear_weight(32, 16), wq = g.linear_weight(32, 16), wv = g.linear_weight(32, 16);
    REQUIRE(wk.size() == 512);
    CHECK(wk[0] == Approx(-0.0680993795f).epsilon(1e-5));
    CHECK(wk[2] == Approx(-0.173487023f).epsilon(1e-5));
    CHECK(wv[511] == Approx(-0.00615870813f).epsilon(1e-5));
}

TEST_CASE("lab average: loops, tril matmul and masked softmax agree to 1e-6", "[lab]") {
    AverageDemoInput in;  // (4, 8, 2)
    AverageDemo d = run_average_demo(test::ctx(), test::kernels(), in);
    CHECK(d.max_diff <= 1e-6f);
    REQUIRE(d.x.rows == 8);
    REQUIRE(d.x.cols == 2);
    // the lecture's own x[0] and xbow[0] (torch.manual_seed(1337); x = torch.randn(4, 8, 2)), as its notebook prints them
    REQUIRE(d.torch_x);
    CHECK(d.x.at(0, 0) == Approx(0.1808f).margin(5e-5));
    CHECK(d.x.at(0, 1) == Approx(-0.0700f).margin(5e-5));
    CHECK(d.xbow_softmax.at(7, 0) == Approx(-0.0341f).margin(5e-5));
    CHECK(d.xbow_softmax.at(7, 1) == Approx(0.1332f).margin(5e-5));
    CHECK_THAT(d.x_origin, Catch::Contains("torch.manual_seed(1337); x = torch.randn(4, 8, 2)"));
    // version 4, self-attention: the lecture's next cell prints this wei[0] (and PyTorch 1.13 gives it to 4 digits)
    const std::vector<float> lecture_wei = {
        1.0000f, 0, 0, 0, 0, 0, 0, 0,
        0.1574f, 0.8426f, 0, 0, 0, 0, 0, 0,
        0.2088f, 0.1646f, 0.6266f, 0, 0, 0, 0, 0,
        0.5792f, 0.1187f, 0.1889f, 0.1131f, 0, 0, 0, 0,
        0.0294f, 0.1052f, 0.0469f, 0.0276f, 0.7909f, 0, 0, 0,
        0.0176f, 0.2689f, 0.0215f, 0.0089f, 0.6812f, 0.0019f, 0, 0,
        0.1691f, 0.4066f, 0.0438f, 0.0416f, 0.1048f, 0.2012f, 0.0329f, 0,
        0.0210f, 0.0843f, 0.0555f, 0.2297f, 0.0573f, 0.0709f, 0.2423f, 0.2391f};
    REQUIRE(d.head_wei.rows == 8);
    REQUIRE(d.head_wei.cols == 8);
    for (size_t i = 0; i < lecture_wei.size(); i++) {
        INFO("wei[0] element " << i);
        CHECK(d.head_wei.v[i] == Approx(lecture_wei[i]).margin(5e-5));
        if (lecture_wei[i] == 0) CHECK(d.head_wei.v[i] == 0.0f);  // the future: exactly zero
    }
    REQUIRE(d.head_out.rows == 8);
    REQUIRE(d.head_out.cols == 16);
    const float out_last[4] = {0.1301f, -0.0328f, -0.4965f, 0.2865f};  // PyTorch: out[0, 7, :4]
    for (int c = 0; c < 4; c++) CHECK(d.head_out.at(7, c) == Approx(out_last[c]).margin(5e-5));
    // xbow row 0 is x row 0; the last row is the mean of all of x[b]
    CHECK(d.xbow_loop.at(0, 0) == d.x.at(0, 0));
    double mean = 0;
    for (int t = 0; t < 8; t++) mean += d.x.at(t, 1);
    CHECK(std::abs(d.xbow_softmax.at(7, 1) - mean / 8) <= 1e-6);
    // the weights: row t is 1/(t+1) on the past, exact zeros on the future
    for (int t = 0; t < 8; t++)
        for (int s = 0; s < 8; s++) CHECK(std::abs(d.wei.at(t, s) - (s <= t ? 1.0f / (t + 1) : 0.0f)) <= 1e-7);
    // an edited shape still agrees (T not a multiple of anything)
    in.B = 3; in.T = 13; in.C = 5; in.seed = 42;
    CHECK(run_average_demo(test::ctx(), test::kernels(), in).max_diff <= 1e-6f);
    // under 16 numbers: the app's own generator, and the header says so
    in.B = 1; in.T = 3; in.C = 2;
    d = run_average_demo(test::ctx(), test::kernels(), in);
    CHECK_FALSE(d.torch_x);
    CHECK_THAT(d.x_origin, Catch::Contains("the app's generator"));
}

TEST_CASE("lab softmax: x1 is diffuse, x8 is nearly one-hot (the lecture's values to 1e-3)", "[lab]") {
    SoftmaxDemo d = run_softmax_demo(test::ctx(), test::kernels(), SoftmaxDemoInput{});
    REQUIRE(d.probs.size() == 2);
    // torch.softmax(torch.tensor([0.1, -0.2, 0.3, -0.2, 0.5]) * m, dim=-1), printed by the lecture to 4 decimals
    const std::vector<double> x1{0.1925, 0.1426, 0.2351, 0.1426, 0.2872};
    const std::vector<double> x8{0.0326, 0.0030, 0.1615, 0.0030, 0.8000};
    test::require_close(test::to_d(d.probs[0]), x1, 1e-3, 0, "softmax x1");
    test::require_close(test::to_d(d.probs[1]), x8, 1e-3, 0, "softmax x8");
    SoftmaxDemoInput in;
    in.multipliers = {16};
    CHECK(run_softmax_demo(test::ctx(), test::kernels(), in).probs[0][4] > 0.95f);
}

TEST_CASE("lab scaling: var(q.k) ~ head_size unscaled and ~1 scaled over 10,000 samples", "[lab]") {
    for (int hs : {16, 64}) {
        ScalingDemoInput in;
        in.head_size = hs;
        ScalingDemo d = run_scaling_demo(test::ctx(), test::kernels(), in);
        INFO("head_size " << hs << ": var unscaled " << d.var_unscaled << ", scaled " << d.var_scaled);
        CHECK(d.samples == 10000);
        CHECK(std::abs(d.var_q - 1.0) <= 0.05);
        CHECK(std::abs(d.var_k - 1.0) <= 0.05);
        CHECK(std::abs(d.var_unscaled - hs) <= 0.15 * hs);
        CHECK(std::abs(d.var_scaled - 1.0) <= 0.15);
        if (hs == 16) {  // PyTorch: torch.manual_seed(1337); q = torch.randn(100, 10, 16); k = torch.randn(100, 10, 16)
            CHECK(d.var_q == Approx(0.99961227).margin(2e-6));
            CHECK(d.var_k == Approx(0.99601740).margin(2e-6));
            CHECK(d.var_unscaled == Approx(16.1178).margin(2e-3));
        }
        int n_u = 0, n_s = 0;
        for (int c : d.hist_unscaled) n_u += c;
        for (int c : d.hist_scaled) n_s += c;
        CHECK(n_u == 10000);
        CHECK(n_s == 10000);
        // unscaled, one row's softmax is peakier than scaled
        float max_u = 0, max_s = 0;
        for (float p : d.row_unscaled) max_u = std::max(max_u, p);
        for (float p : d.row_scaled) max_s = std::max(max_s, p);
        CHECK(max_u > max_s);
        // the lecture's own cell prints k.var() 1.0449, q.var() 1.0700, wei.var() 1.0918 (PyTorch: unscaled 17.4690)
        CHECK(d.lecture.var_k == Approx(1.0449).margin(5e-5));
        CHECK(d.lecture.var_q == Approx(1.0700).margin(5e-5));
        CHECK(d.lecture.var_scaled == Approx(1.0918).margin(5e-5));
        CHECK(d.lecture.var_unscaled == Approx(17.4690).margin(5e-4));
    }
    // PyTorch's randn is reproduced from 16 numbers on: fewer are refused, not drawn another way
    ScalingDemoInput tiny;
    tiny.B = 1; tiny.T = 3; tiny.head_size = 2;
    CHECK_THROWS_WITH(run_scaling_demo(test::ctx(), test::kernels(), tiny), Catch::Contains("B*T*head_size 16 to 16M"));
}

TEST_CASE("lab position: no position embeddings and no mask make attention permutation-equivariant", "[lab]") {
    PositionDemoInput in;
    in.use_pos = false;
    PositionDemo off = run_position_demo(test::ctx(), test::kernels(), in);
    CHECK(off.permuted != off.text);
    CHECK(off.max_diff <= 1e-5f);
    in.use_pos = true;
    PositionDemo on = run_position_demo(test::ctx(), test::kernels(), in);
    CHECK(on.max_diff > 1e-2f);
}

TEST_CASE("lab batches: changing one element leaves the others bit-identical", "[lab]") {
    BatchesDemo d = run_batches_demo(test::ctx(), test::kernels(), BatchesDemoInput{});
    REQUIRE(d.att_changed.size() == 4);
    for (int b = 0; b < 4; b++) {
        INFO("batch element " << b);
        CHECK(d.att_changed[b] == (b == d.changed));
        CHECK(d.out_changed[b] == (b == d.changed));
    }
}

TEST_CASE("lab graph: each node's output is the weighted sum of the values on its incoming edges", "[lab]") {
    GraphDemoInput in;  // "to be or": 8 nodes
    GraphDemo dec = run_graph_demo(test::ctx(), test::kernels(), in);
    CHECK(dec.edges == 36);  // 8 * 9 / 2: from itself and every node before
    CHECK(dec.max_no_edge == 0.0f);
    CHECK(dec.max_sum_error < 1e-5f);
    CHECK(dec.max_message_error < 1e-5f);
    CHECK(dec.att.at(0, 0) == 1.0f);  // the first node hears only itself
    in.causal = false;
    GraphDemo enc = run_graph_demo(test::ctx(), test::kernels(), in);
    CHECK(enc.edges == 64);
    CHECK(enc.max_message_error < 1e-5f);
    CHECK(enc.att.at(0, 7) > 0.0f);  // an encoder's first node hears the last
    GraphDemoInput one{.text = std::string(1, 'x')};  // one node: no graph to show
    CHECK_THAT(test::error_of([&] { run_graph_demo(test::ctx(), test::kernels(), one); }), Catch::Contains("2..64 characters"));
}

TEST_CASE("lab encoder: without the mask the train loss ends at least 1.0 below the decoder's", "[lab]") {
    EncoderDemo d = run_encoder_demo(test::ctx(), test::shakespeare(), EncoderDemoInput{});
    INFO("decoder " << d.decoder.train_loss << ", encoder " << d.encoder.train_loss);
    CHECK(d.decoder.train_loss - d.encoder.train_loss >= 1.0);
    // the decoder's heatmap keeps the future empty, the encoder's fills in
    double dec_future = 0, enc_future = 0;
    for (int t = 0; t < d.decoder.att.rows; t++)
        for (int s = t + 1; s < d.decoder.att.cols; s++) {
            dec_future += d.decoder.att.at(t, s);
            enc_future += d.encoder.att.at(t, s);
        }
    CHECK(dec_future == 0.0);
    CHECK(enc_future > 0.5);
    CHECK(d.decoder.sample.size() > 0);
    CHECK(d.encoder.sample.size() > 0);
}
