// GELU (ops/gelu.h), exact and its tanh form, against the CPU reference (std::erf, std::tanh in double) and against
// finite differences.
#include "ops_common.h"

TEST_CASE("gelu: forward and backward equal the double-precision reference", "[ops]") {
    // 10007: the scalar kernels, and a tail past the last whole workgroup; 10008: the vec4 kernels
    for (const bool tanh_form : {false, true})
        for (const int n : {10007, 10008}) {
            INFO((tanh_form ? "tanh form" : "exact") << ", n " << n);
            Rng r(21);
            auto x = test::randn(r, n, 3.0), dout = test::randn(r, n);
            x[0] = 0.0, x[1] = -8.0, x[2] = 8.0, x[3] = -1e-3, x[4] = 30.0, x[5] = -30.0;  // zero, the tails, tiny
            x[6] = 100.0, x[7] = -100.0;  // u far past exp's range: tanh exactly 1 and -1, no NaN
            auto gx = upload(x), gdout = upload(dout), out = zeros(n), dx = zeros(n);
            test::run([&](Program& p) {
                ops::gelu_forward(test::kernels(), p, out, gx, n, tanh_form);
                ops::gelu_backward(test::kernels(), p, dx, gdout, gx, n, tanh_form);
            });
            std::vector<double> ro, rdx;
            ref::gelu_forward(ro, x, tanh_form);
            ref::gelu_backward(rdx, dout, x, tanh_form);
            test::require_close(download(out, n), ro, 1e-6, 1e-6, "gelu forward");
            test::require_close(download(dx, n), rdx, 1e-6, 1e-6, "gelu backward");
            auto o = download(out, n);
            CHECK(o[0] == 0.0);
            CHECK(o[4] == Approx(30.0));
            CHECK(std::abs(o[5]) < 1e-6);
            CHECK(o[6] == Approx(100.0));
            CHECK(std::abs(o[7]) < 1e-6);
            // in place, as the model runs it (dout overwritten by dinp)
            test::run([&](Program& p) { ops::gelu_backward(test::kernels(), p, gdout, gdout, gx, n, tanh_form); });
            test::require_close(download(gdout, n), rdx, 1e-6, 1e-6, "gelu backward in place");
        }
}

TEST_CASE("gelu: the two forms differ by up to about 5e-4, as PyTorch's do", "[ops]") {
    std::vector<double> x;
    for (int i = -600; i <= 600; i++) x.push_back(i / 100.0);
    std::vector<double> exact, tanh_form;
    ref::gelu_forward(exact, x, false);
    ref::gelu_forward(tanh_form, x, true);
    double worst = 0;
    for (size_t i = 0; i < x.size(); i++) worst = std::max(worst, std::abs(exact[i] - tanh_form[i]));
    CHECK(worst > 1e-4);  // two different functions
    CHECK(worst < 1e-3);
}

TEST_CASE("gelu: the reference's backward is the derivative of its forward", "[ops]") {
    for (const bool tanh_form : {false, true}) {
        INFO((tanh_form ? "tanh form" : "exact"));
        Rng r(22);
        auto x = test::randn(r, 64, 2.0), dout = test::randn(r, 64);
        std::vector<double> dx;
        ref::gelu_backward(dx, dout, x, tanh_form);
        auto loss = [&](const std::vector<double>& xs) {
            std::vector<double> o;
            ref::gelu_forward(o, xs, tanh_form);
            return dot(o, dout);
        };
        test::require_close(dx, fd_grad(loss, x), 1e-7, 1e-6, "gelu backward vs finite differences");
    }
}
