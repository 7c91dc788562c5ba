// Softmax cross-entropy and the loss mean against the CPU reference and finite differences.
#include "ops_common.h"

TEST_CASE("cross-entropy forward and backward match the CPU reference and finite differences", "[ops]") {
    Rng r(4);
    const int B = 3, T = 5, V = 67, N = 30;
    std::vector<uint32_t> tokens(N), off(B);
    for (auto& t : tokens) t = uint32_t(r.below(V));
    for (auto& o : off) o = uint32_t(r.below(N - T - 1));
    auto logits = test::randn(r, B * T * V, 2.0);
    auto gl = upload(logits), gtok = upload(tokens), goff = upload(off);
    auto losses = zeros(B * T), dlogits = zeros(B * T * V);
    Buffer result(test::ctx(), 16, true);
    test::run([&](Program& p) {
        ops::crossentropy_forward(test::kernels(), p, losses, gl, gtok, goff, B, T, V);
        ops::crossentropy_backward(test::kernels(), p, dlogits, gl, gtok, goff, B, T, V);
        p.barrier("the mean reads the losses");
        ops::mean_forward(test::kernels(), p, result, losses, B * T, 0);
    });
    std::vector<double> rl, rd;
    double mean = ref::crossentropy_forward(rl, logits, tokens, off, B, T, V);
    ref::crossentropy_backward(rd, logits, tokens, off, B, T, V);
    test::require_close(download(losses, B * T), rl, 1e-5, 1e-5, "losses");
    test::require_close(download(dlogits, B * T * V), rd, 1e-7, 1e-5, "dlogits");
    auto res = result.read<float>(2);
    REQUIRE(res[0] == Approx(mean).epsilon(1e-5));
    REQUIRE(res[1] == 0.0f);
    auto f = [&](const std::vector<double>& x) {
        std::vector<double> l;
        return ref::crossentropy_forward(l, x, tokens, off, B, T, V);
    };
    test::require_close(rd, fd_grad(f, logits), 1e-8, 1e-4, "dlogits vs finite differences");

    // the training step's fused kernel: the same bits as the two kernels
    auto losses2 = zeros(B * T), dlogits2 = zeros(B * T * V);
    test::run([&](Program& p) { ops::crossentropy_fused(test::kernels(), p, losses2, dlogits2, gl, gtok, goff, B, T, V); });
    REQUIRE(losses2.read<float>(B * T) == losses.read<float>(B * T));
    REQUIRE(dlogits2.read<float>(B * T * V) == dlogits.read<float>(B * T * V));

    // dlogits rows padded to 68 floats (lm_head's backward reads them four at a time): the same values, then
    // zeros over whatever the buffer held
    const int ld = 68;
    auto pad3 = upload(std::vector<float>(B * T * ld, 7.0f)), pad4 = upload(std::vector<float>(B * T * ld, 7.0f));
    test::run([&](Program& p) {
        ops::crossentropy_fused(test::kernels(), p, losses2, pad3, gl, gtok, goff, B, T, V, ld);
        ops::crossentropy_backward(test::kernels(), p, pad4, gl, gtok, goff, B, T, V, ld);
    });
    auto d = dlogits.read<float>(B * T * V);
    for (const Buffer* pad : {&pad3, &pad4}) {
        auto dp = pad->read<float>(B * T * ld);
        for (int row = 0; row < B * T; row++)
            for (int v = 0; v < ld; v++) REQUIRE(dp[row * ld + v] == (v < V ? d[row * V + v] : 0.0f));
    }

    // logits in rows padded to 68 floats (lm_head's forward writes them four at a time): the padding is never
    // read (huge values there would change every loss), the same bits from all three kernels
    std::vector<float> lpad(B * T * ld, 1e30f);
    for (int row = 0; row < B * T; row++)
        for (int v = 0; v < V; v++) lpad[row * ld + v] = float(logits[row * V + v]);
    auto glpad = upload(lpad), losses3 = zeros(B * T), losses4 = zeros(B * T), dl3 = zeros(B * T * V), dl4 = zeros(B * T * V);
    test::run([&](Program& p) {
        ops::crossentropy_forward(test::kernels(), p, losses3, glpad, gtok, goff, B, T, V, ld);
        ops::crossentropy_backward(test::kernels(), p, dl3, glpad, gtok, goff, B, T, V, 0, ld);
        ops::crossentropy_fused(test::kernels(), p, losses4, dl4, glpad, gtok, goff, B, T, V, 0, ld);
    });
    for (const Buffer* l : {&losses3, &losses4}) REQUIRE(l->read<float>(B * T) == losses.read<float>(B * T));
    for (const Buffer* dl : {&dl3, &dl4}) REQUIRE(dl->read<float>(B * T * V) == d);

    // both padded, as in training (crossentropy_fused4: vec4 fetches and stores): the same bits, zeros in dlogits'
    // padding over whatever it held; every V % 4 (the last vec4 holding 1-4 logits) and targets in that vec4
    for (int v : {64, 65, 66, 67}) {
        std::vector<uint32_t> tk = tokens;
        tk[off[1] + 2] = uint32_t(v - 1);  // (b=1, t=1)'s target: the last logit
        for (auto& t : tk) t %= uint32_t(v);
        auto gtk = upload(tk);
        std::vector<float> lv(B * T * ld, 1e30f);  // huge padding: read as a number, it would change every loss
        std::vector<double> lvd(B * T * v);
        for (int row = 0; row < B * T; row++)
            for (int c = 0; c < v; c++) lv[row * ld + c] = float(lvd[row * v + c] = logits[row * V + c]);
        auto glv = upload(lv), l5 = zeros(B * T), l6 = zeros(B * T), d5 = zeros(B * T * v);
        auto d6 = upload(std::vector<float>(B * T * ld, 7.0f));
        test::run([&](Program& p) {
            ops::crossentropy_forward(test::kernels(), p, l5, glv, gtk, goff, B, T, v, ld);
            ops::crossentropy_backward(test::kernels(), p, d5, glv, gtk, goff, B, T, v, 0, ld);
            ops::crossentropy_fused(test::kernels(), p, l6, d6, glv, gtk, goff, B, T, v, ld, ld);
        });
        INFO("V = " << v);
        REQUIRE(l6.read<float>(B * T) == l5.read<float>(B * T));
        auto d5h = d5.read<float>(B * T * v), d6h = d6.read<float>(B * T * ld);
        for (int row = 0; row < B * T; row++)
            for (int c = 0; c < ld; c++) REQUIRE(d6h[row * ld + c] == (c < v ? d5h[row * v + c] : 0.0f));
        std::vector<double> rl5;
        ref::crossentropy_forward(rl5, lvd, tk, off, B, T, v);
        test::require_close(download(l6, B * T), rl5, 1e-5, 1e-5, "padded fused losses vs the CPU reference");
    }
}

TEST_CASE("cross-entropy over a wide vocabulary (a workgroup a row) matches the CPU reference", "[ops]") {
    // V past ops::k_wide_vocab: all three ops take crossentropy_rows; rows of logits and dlogits padded (lld, ld)
    Rng r(5);
    const uint32_t B = 2, T = 3, V = ops::k_wide_vocab + 7, N = 20, ld = V + 5, lld = V + 9;
    std::vector<uint32_t> tokens(N), off(B);
    for (auto& t : tokens) t = uint32_t(r.below(V));
    for (auto& o : off) o = uint32_t(r.below(N - T - 1));
    auto logits = test::randn(r, size_t(B) * T * V, 2.0);
    std::vector<float> lpad(size_t(B) * T * lld, 1e30f);  // the padding is never read
    for (size_t row = 0; row < B * T; row++)
        for (size_t v = 0; v < V; v++) lpad[row * lld + v] = float(logits[row * V + v]);
    auto gl = upload(lpad), gtok = upload(tokens), goff = upload(off);
    auto losses = zeros(B * T), losses2 = zeros(B * T);
    auto dl = upload(std::vector<float>(size_t(B) * T * ld, 7.0f)), dl2 = upload(std::vector<float>(size_t(B) * T * ld, 7.0f));
    test::run([&](Program& p) {
        ops::crossentropy_forward(test::kernels(), p, losses, gl, gtok, goff, B, T, V, lld);
        ops::crossentropy_backward(test::kernels(), p, dl, gl, gtok, goff, B, T, V, ld, lld);
        ops::crossentropy_fused(test::kernels(), p, losses2, dl2, gl, gtok, goff, B, T, V, ld, lld);
    });
    std::vector<double> rl, rd;
    ref::crossentropy_forward(rl, logits, tokens, off, B, T, V);
    ref::crossentropy_backward(rd, logits, tokens, off, B, T, V);
    test::require_close(download(losses, B * T), rl, 1e-5, 1e-5, "losses");
    REQUIRE(losses2.read<float>(B * T) == losses.read<float>(B * T));
    for (const Buffer* d : {&dl, &dl2}) {
        auto dp = d->read<float>(size_t(B) * T * ld);
        std::vector<double> body;
        for (size_t row = 0; row < B * T; row++)
            for (size_t v = 0; v < ld; v++)
                if (v < V) body.push_back(dp[row * ld + v]);
                else REQUIRE(dp[row * ld + v] == 0.0f);  // padding: no gradient
        test::require_close(body, rd, 1e-9, 1e-5, "dlogits");
    }
}

TEST_CASE("the loss mean flags NaN and Inf", "[ops]") {
    std::vector<float> v(1000, 1.5f);
    Buffer result(test::ctx(), 16, true);
    auto gv = upload(v);
    test::run([&](Program& p) { ops::mean_forward(test::kernels(), p, result, gv, 1000, 0); });
    auto res = result.read<float>(2);
    REQUIRE(res[0] == Approx(1.5));
    REQUIRE(res[1] == 0.0f);
    v[517] = std::numeric_limits<float>::quiet_NaN();
    gv.upload(v);
    test::run([&](Program& p) { ops::mean_forward(test::kernels(), p, result, gv, 1000, 0); });
    REQUIRE(result.read<float>(2)[1] == 1.0f);
}
