// AdamW against PyTorch's update, and the replicas' averaged update.
#include "ops_common.h"

TEST_CASE("AdamW matches PyTorch's update over several steps", "[ops]") {
    Rng r(5);
    const int n = 1004;
    auto p = test::randn(r, n), m = std::vector<double>(n, 0), v = std::vector<double>(n, 0);
    auto gp = upload(p), gg = zeros(n), gm = zeros(n), gv = zeros(n);
    Buffer hyper(test::ctx(), sizeof(ops::AdamWHyper), true);
    for (int t = 1; t <= 3; t++) {
        auto g = test::randn(r, n, 0.1);
        gg.upload(test::to_f(g));
        ops::AdamWHyper h{3e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, float(1 - std::pow(0.9, t)), float(1 - std::pow(0.999, t))};
        hyper.upload(&h, sizeof h);
        test::run([&](Program& pr) { ops::adamw(test::kernels(), pr, gp, gg, gm, gv, hyper, n); });
        ref::adamw(p, test::to_d(test::to_f(g)), m, v, 3e-3, 0.9, 0.999, 1e-8, 0.01, t);
    }
    test::require_close(download(gp, n), p, 1e-6, 1e-5, "params after 3 AdamW steps");
    test::require_close(download(gm, n), m, 1e-7, 1e-5, "first moment");
}

TEST_CASE("AdamW of replicas' gradients: their mean weighted by rows, in slice order, then the update", "[ops]") {
    Rng r(12);
    const int n = 1004;
    for (int R : {2, 3, 8}) {
        INFO(R << " replicas");
        auto p = test::randn(r, n), m = std::vector<double>(n, 0), v = std::vector<double>(n, 0);
        auto gp = upload(p), gm = zeros(n), gv = zeros(n);
        std::vector<float> w(R);
        float total = 0;
        for (int k = 0; k < R; k++) total += w[k] = float(k + 1);  // unequal: a plain mean fails
        for (auto& x : w) x /= total;
        Buffer hyper(test::ctx(), sizeof(ops::AdamWHyper), true);
        for (int t = 1; t <= 2; t++) {
            auto all = test::randn(r, size_t(R) * n, 0.1);
            std::vector<double> mean(n);
            for (int i = 0; i < n; i++) {
                float s = 0;  // the shader's float sum, in slice order
                for (int k = 0; k < R; k++) s += w[k] * float(all[size_t(k) * n + i]);
                mean[i] = s;
            }
            auto gall = upload(all);
            ops::AdamWHyper h{3e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, float(1 - std::pow(0.9, t)), float(1 - std::pow(0.999, t))};
            hyper.upload(&h, sizeof h);
            test::run([&](Program& pr) { ops::adamw(test::kernels(), pr, gp, gall, gm, gv, hyper, n, uint32_t(R), w.data()); });
            ref::adamw(p, mean, m, v, 3e-3, 0.9, 0.999, 1e-8, 0.01, t);
        }
        test::require_close(download(gp, n), p, 1e-6, 1e-5, "params after 2 AdamW steps on the replicas' mean");
        test::require_close(download(gm, n), m, 1e-7, 1e-5, "first moment");
        test::require_close(download(gv, n), v, 1e-9, 1e-5, "second moment");
    }
    Buffer dummy(test::ctx(), 16);
    float w1 = 1;
    REQUIRE(test::error_of([&] {
                test::run([&](Program& pr) { ops::adamw(test::kernels(), pr, dummy, dummy, dummy, dummy, dummy, 4, 9, &w1); });
            }).find("1 to 8") != std::string::npos);
}
