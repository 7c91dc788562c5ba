// Linear layers (matmul_forward / matmul_backward) in every kernel family against the CPU reference and finite
// differences, and their fused parts (residual, dropout, the ReLU mask) against the unfused bits.
#include "ops_common.h"

TEST_CASE("matmul forward and backward match the CPU reference and finite differences", "[ops]") {
    Rng r(2);
    const int M = 37;
    // K = 23 takes the plain kernels, K = 24 and 44 the tiled texel-buffer ones (partial tiles in every
    // direction); N = 20 the tiled one that reads dout as vec4. splits 5: dw and dbias summed over 5 row
    // ranges and added up by a second pass (as on GPUs; the plain kernels ignore it)
    for (int N : {19, 20})
    for (int K : {23, 24, 44})
    for (bool relu : {false, true})
    for (uint32_t splits : {1u, 5u}) {
        INFO("N " << N << " K " << K << " relu " << relu << " splits " << splits);
        for (bool accumulate : {false, true}) {
            auto inp = test::randn(r, M * K), w = test::randn(r, N * K, 0.2), bias = test::randn(r, N),
                 dout = test::randn(r, M * N), prior = test::randn(r, M * K);
            auto ginp = upload(inp), gw = upload(w), gb = upload(bias), gdout = upload(dout);
            auto out = zeros(M * N), dinp = upload(prior), dw = zeros(N * K), db = zeros(N);
            auto scratch = zeros(std::max<size_t>(1, ops::matmul_backward_scratch(N, K, true, splits)));
            test::run([&](Program& p) {
                ops::matmul_forward(test::kernels(), p, out, ginp, gw, gb, M, N, K, true, relu);
                p.barrier("backward reads out for the relu mask");
                ops::matmul_backward(test::kernels(), p, {.dinp = dinp, .dw = dw, .dbias = db, .dout = gdout,
                    .inp = ginp, .w = gw, .out = out, .M = uint32_t(M), .N = uint32_t(N), .K = uint32_t(K),
                    .has_bias = true, .relu = relu, .accumulate = accumulate, .scratch = scratch, .splits = splits});
            });
            std::vector<double> ro, rdinp, rdw, rdb;
            ref::matmul_forward(ro, inp, w, &bias, M, N, K, relu);
            ref::matmul_backward(rdinp, rdw, &rdb, dout, inp, w, ro, M, N, K, relu);
            if (accumulate)
                for (size_t i = 0; i < rdinp.size(); i++) rdinp[i] += prior[i];
            test::require_close(download(out, M * N), ro, 1e-5, 1e-5, "matmul out");
            test::require_close(download(dinp, M * K), rdinp, 1e-5, 1e-5, "dinp");
            test::require_close(download(dw, N * K), rdw, 1e-4, 1e-5, "dw");
            test::require_close(download(db, N), rdb, 1e-4, 1e-5, "dbias");
            auto fw = [&](const std::vector<double>& x) {
                std::vector<double> o;
                ref::matmul_forward(o, inp, x, &bias, M, N, K, relu);
                return dot(o, dout);
            };
            auto fi = [&](const std::vector<double>& x) {
                std::vector<double> o;
                ref::matmul_forward(o, x, w, &bias, M, N, K, relu);
                return dot(o, dout);
            };
            ref::matmul_backward(rdinp, rdw, &rdb, dout, inp, w, ro, M, N, K, relu);
            test::require_close(rdw, fd_grad(fw, w), 1e-5, 1e-4, "dw vs finite differences");
            test::require_close(rdinp, fd_grad(fi, inp), 1e-5, 1e-4, "dinp vs finite differences");
        }
    }
}

TEST_CASE("matmul with a fused residual add matches the reference", "[ops]") {
    Rng r(6);
    const int M = 21, N = 16;
    for (int K : {12, 13}) {
    auto inp = test::randn(r, M * K), w = test::randn(r, N * K), bias = test::randn(r, N), res = test::randn(r, M * N);
    auto ginp = upload(inp), gw = upload(w), gb = upload(bias), gres = upload(res), out = zeros(M * N);
    test::run([&](Program& p) { ops::matmul_forward(test::kernels(), p, out, ginp, gw, gb, M, N, K, true, false, gres); });
    std::vector<double> ro;
    ref::matmul_forward(ro, inp, w, &bias, M, N, K);
    for (size_t i = 0; i < ro.size(); i++) ro[i] += res[i];
    test::require_close(download(out, M * N), ro, 1e-5, 1e-5, "x + proj(...)");
    }
}

TEST_CASE("matmul_forward's fused dropout gives the bits of matmul_forward then dropout_forward", "[ops]") {
    // A block's proj and fc2 under dropout on CPU devices: one dispatch, the product never stored, dropout_forward's
    // mask (the site, element index m * N + n) applied before the residual: the same bits as the two dispatches. With
    // and without the residual, the ReLU off and on, rows in partial tiles (M 37). Against the CPU reference: the
    // matmul and dropout tests.
    Rng r(31);
    test::PolicyGuard pol;
    pol->matmul = MatmulChoice::tiled;  // the register tiles (GPUs default to the shared-memory ones, which leave dropout to its kernel)
    Buffer key(test::ctx(), 8, true);
    const uint32_t k[2] = {777u, 3u};
    key.upload(k, 8);
    const int M = 37, N = 20, K = 24;
    const float prob = 0.3f;
    for (bool with_res : {true, false})
    for (bool relu : {false, true}) {
        INFO("residual " << with_res << " relu " << relu);
        auto ginp = upload(test::randn(r, M * K)), gw = upload(test::randn(r, N * K)), gb = upload(test::randn(r, N)),
             gres = upload(test::randn(r, M * N));
        auto fused = zeros(M * N), tmp = zeros(M * N), two = zeros(M * N);
        BufferRange res = with_res ? BufferRange(gres) : BufferRange();
        REQUIRE(ops::matmul_forward_can_dropout(test::ctx(), N, K, fused, res));
        ops::MatmulDropout md{key, 7, prob};
        test::run([&](Program& p) {
            ops::matmul_forward(test::kernels(), p, fused, ginp, gw, gb, M, N, K, true, relu, res, 0, &md);
            ops::matmul_forward(test::kernels(), p, tmp, ginp, gw, gb, M, N, K, true, relu);
            p.barrier("dropout reads the product");
            ops::dropout_forward(test::kernels(), p, two, tmp, res, key, M * N, 7, prob);
        });
        auto a = fused.read<float>(M * N), b = two.read<float>(M * N), t = tmp.read<float>(M * N),
             rv = gres.read<float>(M * N);
        int diff = 0, dropped = 0;
        for (int i = 0; i < M * N; i++) {
            diff += a[i] != b[i];
            dropped += with_res ? a[i] == rv[i] : a[i] == 0.0f && t[i] != 0.0f;
        }
        CHECK(diff == 0);
        CHECK(dropped > M * N / 10);  // the mask dropped some (about 30%)
    }
    Buffer b19 = zeros(37 * 19);
    REQUIRE(!ops::matmul_forward_can_dropout(test::ctx(), 19, K, b19, {}));  // rows not whole vec4s
    ops::MatmulDropout md{key, 7, prob};
    auto g = zeros(37 * K);
    CHECK_THROWS_WITH(test::run([&](Program& p) { ops::matmul_forward(test::kernels(), p, b19, g, g, g, 37, 19, K, true, false, {}, 0, &md); }),
                      Catch::Matchers::Contains("matmul_forward_can_dropout"));
}

TEST_CASE("matmul_backward's mask_in gives the bits of the ReLU's mask in the backward before it", "[ops]") {
    // A feed-forward: h = relu(x fc^T + b) (M, F), y = h fc2^T + b2 (M, C). fc2's backward masking dh where h <= 0
    // (mask_in) and fc's without its ReLU mask give what fc2's plain backward and fc's masked one give, to the bit.
    // M 37: partial row tiles; dinp accumulated (+=) and not; dout vec4 (C 16) and scalar (C 14, the tiled kernel's
    // other variant). The tiled kernels on every device (GPUs take the shared-memory ones, without mask_in, by default).
    Rng r(31);
    const int M = 37, K = 12, F = 48;
    test::PolicyGuard pol;
    if (ops::smem_fits(test::ctx())) {
        pol->matmul = MatmulChoice::smem;
        CHECK_FALSE(ops::matmul_backward_can_mask_in(test::ctx(), 16, F));
    }
    pol->matmul = MatmulChoice::tiled;
    REQUIRE(ops::matmul_backward_can_mask_in(test::ctx(), 16, F));
    {
        auto d = zeros(M * F), dw = zeros(16 * F), db = zeros(16), g = zeros(M * 16), x = zeros(M * F), w = zeros(16 * F);
        Program p(test::ctx());
        p.begin();
        CHECK_THROWS_WITH(ops::matmul_backward(test::kernels(), p, {.dinp = d, .dw = dw, .dbias = db, .dout = g,
            .inp = x, .w = w, .out = g, .M = uint32_t(M), .N = 16, .K = uint32_t(F), .has_bias = true,
            .want_dinp = false, .mask_in = true}),
                          Catch::Matchers::Contains("mask_in needs dinp"));
    }
    for (int C : {16, 14})
    for (bool acc : {false, true}) {
        INFO("C " << C << " accumulate " << acc);
        auto x = upload(test::randn(r, M * K)), fc = upload(test::randn(r, F * K)), fcb = upload(test::randn(r, F)),
             fc2 = upload(test::randn(r, C * F)), fc2b = upload(test::randn(r, C)), dy = upload(test::randn(r, M * C)),
             h = zeros(size_t(M) * F);
        test::run([&](Program& p) { ops::matmul_forward(test::kernels(), p, h, x, fc, fcb, M, F, K, true, true); });
        auto hv = download(h, size_t(M) * F);
        int zeros_in_h = 0;
        for (float v : hv) zeros_in_h += v <= 0.0f;
        REQUIRE(zeros_in_h > M * F / 4);  // the mask matters
        std::vector<double> res[2][5];
        for (int fused = 0; fused < 2; fused++) {
            auto dh = zeros(size_t(M) * F), dw2 = zeros(size_t(C) * F), db2 = zeros(C), dw = zeros(size_t(F) * K),
                 db = zeros(F), dx = upload(std::vector<float>(size_t(M) * K, 0.5f));
            test::run([&](Program& p) {
                ops::matmul_backward(test::kernels(), p, {.dinp = dh, .dw = dw2, .dbias = db2, .dout = dy, .inp = h,
                    .w = fc2, .out = dy, .M = uint32_t(M), .N = uint32_t(C), .K = uint32_t(F), .has_bias = true,
                    .mask_in = fused == 1});
                p.barrier("fc's backward reads dh");
                ops::matmul_backward(test::kernels(), p, {.dinp = dx, .dw = dw, .dbias = db, .dout = dh, .inp = x,
                    .w = fc, .out = h, .M = uint32_t(M), .N = uint32_t(F), .K = uint32_t(K), .has_bias = true,
                    .relu = fused == 0, .accumulate = acc});
            });
            res[fused][0] = download(dx, size_t(M) * K), res[fused][1] = download(dw, size_t(F) * K);
            res[fused][2] = download(db, F), res[fused][3] = download(dw2, size_t(C) * F), res[fused][4] = download(db2, C);
            if (fused) {
                auto dhv = download(dh, size_t(M) * F);
                for (size_t i = 0; i < dhv.size(); i++)
                    if (hv[i] <= 0.0f) REQUIRE(dhv[i] == 0.0f);
            }
        }
        for (int t = 0; t < 5; t++) {
            INFO("tensor " << t << " (dx, dw, db, dw2, db2)");
            int diff = 0;
            for (size_t i = 0; i < res[0][t].size(); i++) diff += res[0][t][i] != res[1][t][i];
            CHECK(diff == 0);
        }
    }
}

TEST_CASE("matmul: the GPU's shared-memory kernels and the CPU's register tiles match the reference", "[ops]") {
    // Both K % 4 == 0 kernel families whatever the device (the default takes one of them): partial 128x128
    // workgroup tiles (M 70, and 200: two tiles; N 20, and 140: two tiles; K 24, and 136: two tiles of dinp and
    // dw), partial 16-wide slices of every reduction, bias or none, ReLU, the fused residual, dinp accumulated or
    // not wanted, dw and dbias over 3 row ranges. N 19: the backward falls back to the tiled kernel (smem needs
    // N % 4 == 0).
    Rng r(12);
    test::PolicyGuard pol;
    for (MatmulChoice kind : {MatmulChoice::smem, MatmulChoice::tiled}) {
    if (kind == MatmulChoice::smem && !ops::smem_fits(test::ctx())) continue;  // this GPU's limits are too small
    for (int M : {70, 200})
    for (int N : {19, 20, 140})
    for (int K : {24, 136})
    for (bool relu : {false, true})
    for (uint32_t splits : {1u, 3u})
    for (bool has_bias : {true, false}) {
        bool accumulate = splits > 1, want_dinp = !(relu && !has_bias);
        INFO((kind == MatmulChoice::smem ? "smem" : "tiled") << " M " << M << " N " << N << " K " << K << " relu " << relu << " splits " << splits << " bias "
                  << has_bias << " dinp " << want_dinp);
        pol->matmul = kind;
        auto inp = test::randn(r, M * K), w = test::randn(r, N * K, 0.2), bias = test::randn(r, N),
             res = test::randn(r, M * N), dout = test::randn(r, M * N), prior = test::randn(r, M * K);
        auto ginp = upload(inp), gw = upload(w), gb = upload(bias), gres = upload(res), gdout = upload(dout);
        auto out = zeros(M * N), out2 = zeros(M * N), dinp = upload(prior), dw = zeros(N * K), db = zeros(N);
        auto scratch = zeros(std::max<size_t>(1, ops::matmul_backward_scratch(N, K, has_bias, splits)));
        test::run([&](Program& p) {
            ops::matmul_forward(test::kernels(), p, out, ginp, gw, gb, M, N, K, has_bias, relu);
            ops::matmul_forward(test::kernels(), p, out2, ginp, gw, gb, M, N, K, false, false, gres);
            p.barrier("backward reads out for the relu mask");
            ops::matmul_backward(test::kernels(), p, {.dinp = dinp, .dw = dw, .dbias = db, .dout = gdout, .inp = ginp,
                .w = gw, .out = out, .M = uint32_t(M), .N = uint32_t(N), .K = uint32_t(K), .has_bias = has_bias,
                .relu = relu, .want_dinp = want_dinp, .accumulate = accumulate, .scratch = scratch, .splits = splits});
        });
        std::vector<double> ro, ro2, rdinp, rdw, rdb;
        ref::matmul_forward(ro, inp, w, has_bias ? &bias : nullptr, M, N, K, relu);
        ref::matmul_forward(ro2, inp, w, nullptr, M, N, K);
        for (size_t i = 0; i < ro2.size(); i++) ro2[i] += res[i];
        ref::matmul_backward(rdinp, rdw, &rdb, dout, inp, w, ro, M, N, K, relu);
        if (!want_dinp) rdinp = prior;  // untouched
        else if (accumulate)
            for (size_t i = 0; i < rdinp.size(); i++) rdinp[i] += prior[i];
        test::require_close(download(out, M * N), ro, 1e-5, 1e-5, "out");
        test::require_close(download(out2, M * N), ro2, 1e-5, 1e-5, "out (no bias, residual)");
        test::require_close(download(dinp, M * K), rdinp, 1e-5, 1e-5, "dinp");
        test::require_close(download(dw, N * K), rdw, 1e-4, 1e-5, "dw");
        if (has_bias) test::require_close(download(db, N), rdb, 1e-4, 1e-5, "dbias");
        else REQUIRE(download(db, N) == std::vector<double>(N, 0.0));  // not written

        // the forward into rows padded to a multiple of 4 (as lm_head's logits; the tiled kernel only): the same
        // values, then zeros over whatever the buffer held
        if (uint32_t lo = ops::matmul_forward_ld(test::ctx(), N, K); lo != uint32_t(N)) {
            REQUIRE(kind == MatmulChoice::tiled);
            REQUIRE(lo == uint32_t(N + 3) / 4 * 4);
            auto opad = upload(std::vector<float>(size_t(M) * lo, 7.0f));
            test::run([&](Program& p) {
                ops::matmul_forward(test::kernels(), p, opad, ginp, gw, gb, M, N, K, has_bias, relu, {}, lo);
            });
            auto got = opad.read<float>(size_t(M) * lo), want = out.read<float>(size_t(M) * N);
            for (int m = 0; m < M; m++)
                for (uint32_t n = 0; n < lo; n++)
                    REQUIRE(got[m * lo + n] == (n < uint32_t(N) ? want[m * N + n] : 0.0f));
        }

        // dout with rows padded to a multiple of 4 (as lm_head's dlogits): the same gradients (N 19: the vec4
        // kernel over 20 columns, the last one zero; N % 4 == 0: no padding, the call as above)
        if (relu) continue;
        uint32_t ld = ops::matmul_dout_ld(N, K);
        std::vector<float> dpad(size_t(M) * ld, 0.0f);
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) dpad[size_t(m) * ld + n] = float(dout[size_t(m) * N + n]);
        auto gdpad = upload(dpad), dinp2 = upload(prior), dw2 = zeros(N * K), db2 = zeros(N);
        test::run([&](Program& p) {
            ops::matmul_backward(test::kernels(), p, {.dinp = dinp2, .dw = dw2, .dbias = db2, .dout = gdpad,
                .inp = ginp, .w = gw, .out = out, .M = uint32_t(M), .N = uint32_t(N), .K = uint32_t(K),
                .has_bias = has_bias, .want_dinp = want_dinp, .accumulate = accumulate, .scratch = scratch,
                .splits = splits, .dout_padded = true});
        });
        test::require_close(download(dinp2, M * K), rdinp, 1e-5, 1e-5, "dinp (padded dout)");
        test::require_close(download(dw2, N * K), rdw, 1e-4, 1e-5, "dw (padded dout)");
        if (has_bias) test::require_close(download(db2, N), rdb, 1e-4, 1e-5, "dbias (padded dout)");
    }
    }
    pol->matmul = MatmulChoice::tiled;
    // padded dout rows with ReLU: the forward output would be read with dout's stride; refused
    auto b = zeros(8 * 20 * 8);
    CHECK_THROWS_WITH(test::run([&](Program& p) {
                          ops::matmul_backward(test::kernels(), p, {.dinp = b, .dw = b, .dbias = b, .dout = b,
                              .inp = b, .w = b, .out = b, .M = 8, .N = 19, .K = 8, .has_bias = true, .relu = true,
                              .dout_padded = true});
                      }),
                      Catch::Matchers::Contains("padded dout"));
    // padded forward rows: not with a residual, not for K % 4 != 0 (the plain kernel), and under smem not at all
    CHECK_THROWS_WITH(test::run([&](Program& p) { ops::matmul_forward(test::kernels(), p, b, b, b, b, 8, 19, 8, true, false, b, 20); }),
                      Catch::Matchers::Contains("pads rows"));
    CHECK_THROWS_WITH(test::run([&](Program& p) { ops::matmul_forward(test::kernels(), p, b, b, b, b, 8, 19, 7, true, false, {}, 20); }),
                      Catch::Matchers::Contains("pads rows"));
    REQUIRE(ops::matmul_forward_ld(test::ctx(), 19, 7) == 19);
    if (ops::smem_fits(test::ctx())) {
        pol->matmul = MatmulChoice::smem;
        REQUIRE(ops::matmul_forward_ld(test::ctx(), 19, 8) == 19);
        CHECK_THROWS_WITH(test::run([&](Program& p) { ops::matmul_forward(test::kernels(), p, b, b, b, b, 8, 19, 8, true, false, {}, 20); }),
                          Catch::Matchers::Contains("pads rows"));
    }
}
