// LayerNorm against the CPU reference and finite differences, and its fused / in-register variants bit for bit.
#include "ops_common.h"

TEST_CASE("layernorm forward and backward match the reference and finite differences", "[ops]") {
    Rng r(7);
    const int N = 29, C = GENERATE(19, 20);  // 19: the plain kernels; 20: the vec4 ones
    // splits 4: dw and db summed over 4 row ranges, then a second pass (as on GPUs; the plain kernel ignores it)
    for (bool accumulate : {false, true})
    for (uint32_t splits : {1u, 4u}) {
        INFO("C " << C << " accumulate " << accumulate << " splits " << splits);
        auto inp = test::randn(r, N * C, 2.0), w = test::randn(r, C), b = test::randn(r, C), dout = test::randn(r, N * C),
             prior = test::randn(r, N * C);
        auto ginp = upload(inp), gw = upload(w), gb = upload(b), gdout = upload(dout);
        auto out = zeros(N * C), stats = zeros(N * 2), dinp = upload(prior), dw = zeros(C), db = zeros(C);
        auto scratch = zeros(std::max<size_t>(1, ops::layernorm_backward_scratch(C, splits)));
        test::run([&](Program& p) {
            ops::layernorm_forward(test::kernels(), p, out, stats, ginp, gw, gb, N, C);
            p.barrier("backward reads the stats");
            ops::layernorm_backward(test::kernels(), p, dinp, dw, db, gdout, ginp, gw, stats, N, C, accumulate, scratch,
                                    splits);
        });
        std::vector<double> ro, rdinp, rdw, rdb;
        ref::layernorm_forward(ro, inp, w, b, N, C);
        ref::layernorm_backward(rdinp, rdw, rdb, dout, inp, w, N, C);
        auto want_dinp = rdinp;
        if (accumulate)
            for (size_t i = 0; i < want_dinp.size(); i++) want_dinp[i] += prior[i];
        test::require_close(download(out, N * C), ro, 1e-5, 1e-5, "layernorm out");
        test::require_close(download(dinp, N * C), want_dinp, 1e-5, 1e-4, "dinp");
        test::require_close(download(dw, C), rdw, 1e-4, 1e-4, "dw");
        test::require_close(download(db, C), rdb, 1e-4, 1e-4, "db");
        auto fi = [&](const std::vector<double>& x) {
            std::vector<double> o;
            ref::layernorm_forward(o, x, w, b, N, C);
            return dot(o, dout);
        };
        auto fw = [&](const std::vector<double>& x) {
            std::vector<double> o;
            ref::layernorm_forward(o, inp, x, b, N, C);
            return dot(o, dout);
        };
        test::require_close(rdinp, fd_grad(fi, inp), 1e-6, 1e-4, "dinp vs finite differences");
        test::require_close(rdw, fd_grad(fw, w), 1e-6, 1e-4, "dw vs finite differences");
    }
}

TEST_CASE("layernorm_backward's fused dropout gives the bits of layernorm_backward then dropout_backward", "[ops]") {
    // In residual blocks under dropout the LayerNorm backward that writes the stream's gradient also passes it back
    // through the next branch's dropout (model.cpp: one dispatch fewer a branch): the same bits as dropout_backward of
    // what it stored, with dinp = and +=, and splits 1 and 4 (as on GPUs). Against the CPU reference: the layernorm
    // and dropout tests.
    Rng r(41);
    Buffer key(test::ctx(), 8, true);
    const uint32_t k[2] = {4242u, 9u};
    key.upload(k, 8);
    const int N = 29, C = 20;
    const float prob = 0.3f;
    for (bool accumulate : {false, true})
    for (uint32_t splits : {1u, 4u}) {
        INFO("accumulate " << accumulate << " splits " << splits);
        auto inp = test::randn(r, N * C, 2.0), prior = test::randn(r, N * C);
        auto ginp = upload(inp), gw = upload(test::randn(r, C)), gb = upload(test::randn(r, C)),
             gdout = upload(test::randn(r, N * C));
        auto out = zeros(N * C), stats = zeros(N * 2), dinp = upload(prior), dinp2 = upload(prior), dw = zeros(C),
             db = zeros(C), fused = zeros(N * C), two = zeros(N * C);
        auto scratch = zeros(std::max<size_t>(1, ops::layernorm_backward_scratch(C, splits)));
        ops::LayerNormDropout ld{fused, key, 5, prob};
        test::run([&](Program& p) {
            ops::layernorm_forward(test::kernels(), p, out, stats, ginp, gw, gb, N, C);
            p.barrier("backward reads the stats");
            ops::layernorm_backward(test::kernels(), p, dinp, dw, db, gdout, ginp, gw, stats, N, C, accumulate, scratch,
                                    splits, &ld);
            ops::layernorm_backward(test::kernels(), p, dinp2, dw, db, gdout, ginp, gw, stats, N, C, accumulate, scratch,
                                    splits);
            p.barrier("dropout reads dinp");
            ops::dropout_backward(test::kernels(), p, two, dinp2, key, N * C, 5, prob);
        });
        auto a = fused.read<float>(N * C), b = two.read<float>(N * C), d1 = dinp.read<float>(N * C),
             d2 = dinp2.read<float>(N * C);
        int diff = 0, diff_dinp = 0, dropped = 0;
        for (int i = 0; i < N * C; i++) {
            diff += a[i] != b[i];
            diff_dinp += d1[i] != d2[i];
            dropped += a[i] == 0.0f && d1[i] != 0.0f;
        }
        CHECK(diff == 0);
        CHECK(diff_dinp == 0);              // dinp itself as without the dropout
        CHECK(dropped > N * C / 10);        // the mask dropped some (about 30%)
        CHECK(dropped < N * C / 2);
    }
    auto g19 = zeros(29 * 19), s19 = zeros(29 * 2), w19 = zeros(19);
    ops::LayerNormDropout ld{g19, key, 5, prob};
    CHECK_THROWS_WITH(test::run([&](Program& p) {
                          ops::layernorm_backward(test::kernels(), p, g19, w19, w19, g19, g19, w19, s19, 29, 19, false,
                                                  {}, 1, &ld);
                      }),
                      Catch::Matchers::Contains("C % 4 == 0"));
}

TEST_CASE("layernorm: the row in registers gives the bits of the row read from texels", "[ops]") {
    // layernorm_c4r: the forward keeps a row of C <= 256 in registers (C / 4 vec4s, fetched once an element); wider
    // rows and ATTNLAB_LAYERNORM_ROWS=memory fetch it again for every pass; the same sums in the same order, so the same
    // bits (out and stats).
    REQUIRE(ops::layernorm_c4r(test::ctx(), 64) == 16);
    REQUIRE(ops::layernorm_c4r(test::ctx(), 256) == 64);
    REQUIRE(ops::layernorm_c4r(test::ctx(), 384) == 1);  // the gpt preset's: from texels
    Rng r(17);
    test::PolicyGuard pol;
    const int N = 37;
    for (int C : {20, 64, 256}) {
        INFO("C " << C);
        auto ginp = upload(test::randn(r, N * C, 2.0)), gw = upload(test::randn(r, C)), gb = upload(test::randn(r, C));
        std::vector<double> res[2][2];
        for (int v = 0; v < 2; v++) {
            pol->layernorm_rows_in_registers = v != 0;
            REQUIRE(ops::layernorm_c4r(test::ctx(), C) == (v == 0 ? 1u : uint32_t(C / 4)));
            auto out = zeros(N * C), stats = zeros(N * 2);
            test::run([&](Program& p) { ops::layernorm_forward(test::kernels(), p, out, stats, ginp, gw, gb, N, C); });
            res[v][0] = download(out, N * C), res[v][1] = download(stats, N * 2);
        }
        for (int t = 0; t < 2; t++) {
            INFO("tensor " << t << " (out, stats)");
            int diff = 0;
            for (size_t i = 0; i < res[0][t].size(); i++) diff += res[0][t][i] != res[1][t][i];
            CHECK(diff == 0);
        }
    }
}
