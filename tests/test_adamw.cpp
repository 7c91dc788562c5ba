// AdamW against PyTorch's update, the replicas' averaged update, and clipping by the gradient's global norm.
#include "ops_common.h"

// grad_norm's output when nothing clips: scale 1
static Buffer no_clip() {
    Buffer b(test::ctx(), 16, true);
    const float c[4] = {1, 0, 0, 0};
    b.upload(c, sizeof c);
    return b;
}

TEST_CASE("AdamW matches PyTorch's update over several steps", "[ops]") {
    Rng r(5);
    const int n = 1004;
    auto p = test::randn(r, n), m = std::vector<double>(n, 0), v = std::vector<double>(n, 0);
    auto gp = upload(p), gg = zeros(n), gm = zeros(n), gv = zeros(n);
    Buffer hyper(test::ctx(), sizeof(ops::AdamWHyper), true), clip = no_clip();
    for (int t = 1; t <= 3; t++) {
        auto g = test::randn(r, n, 0.1);
        gg.upload(test::to_f(g));
        ops::AdamWHyper h{3e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, float(1 - std::pow(0.9, t)), float(1 - std::pow(0.999, t))};
        hyper.upload(&h, sizeof h);
        test::run([&](Program& pr) { ops::adamw(test::kernels(), pr, gp, gg, gm, gv, hyper, clip, n, n); });
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
        Buffer hyper(test::ctx(), sizeof(ops::AdamWHyper), true), clip = no_clip();
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
            test::run([&](Program& pr) { ops::adamw(test::kernels(), pr, gp, gall, gm, gv, hyper, clip, n, n, uint32_t(R), w.data()); });
            ref::adamw(p, mean, m, v, 3e-3, 0.9, 0.999, 1e-8, 0.01, t);
        }
        test::require_close(download(gp, n), p, 1e-6, 1e-5, "params after 2 AdamW steps on the replicas' mean");
        test::require_close(download(gm, n), m, 1e-7, 1e-5, "first moment");
        test::require_close(download(gv, n), v, 1e-9, 1e-5, "second moment");
    }
    Buffer dummy(test::ctx(), 16);
    float w1 = 1;
    REQUIRE(test::error_of([&] {
                test::run([&](Program& pr) { ops::adamw(test::kernels(), pr, dummy, dummy, dummy, dummy, dummy, dummy, 4, 4, 9, &w1); });
            }).find("1 to 8") != std::string::npos);
}

TEST_CASE("clipping by the global norm and decay of 2-D tensors only match PyTorch's (nanoGPT's optimizer)", "[ops]") {
    Rng r(21);
    const int n = 1004, decay_end = 500;  // nanoGPT's layout: the 2-D tensors first, AdamW decays only them
    for (int R : {1, 3}) {
        for (float max_norm : {0.5f, 100.0f, 0.0f}) {  // clips, too large to clip, off
            INFO(R << " replicas, max norm " << max_norm);
            auto p = test::randn(r, n), m = std::vector<double>(n, 0), v = std::vector<double>(n, 0);
            auto gp = upload(p), gm = zeros(n), gv = zeros(n);
            Buffer hyper(test::ctx(), sizeof(ops::AdamWHyper), true), parts = zeros(ops::grad_norm_parts(n));
            Buffer clip(test::ctx(), 16, true);
            std::vector<float> w(R, 1.0f / float(R));
            for (int t = 1; t <= 2; t++) {
                auto all = test::randn(r, size_t(R) * n, 0.1);
                std::vector<double> g(n);
                for (int i = 0; i < n; i++) {
                    float s = 0;
                    for (int k = 0; k < R; k++) s += (R > 1 ? w[k] : 1.0f) * float(all[size_t(k) * n + i]);
                    g[i] = s;
                }
                auto gall = upload(all);
                ops::AdamWHyper h{3e-3f, 0.9f, 0.99f, 1e-8f, 0.1f, float(1 - std::pow(0.9, t)),
                                  float(1 - std::pow(0.99, t)), max_norm};
                hyper.upload(&h, sizeof h);
                test::run([&](Program& pr) {
                    ops::grad_norm(test::kernels(), pr, clip, parts, gall, hyper, n, uint32_t(R), w.data());
                    pr.barrier("AdamW reads the scale");
                    ops::adamw(test::kernels(), pr, gp, gall, gm, gv, hyper, clip, n, decay_end, uint32_t(R), w.data());
                });
                double norm = max_norm > 0 ? ref::clip_grad_norm(g, max_norm) : ref::clip_grad_norm(g, 1e30);
                auto got = clip.read<float>(4);
                REQUIRE(got[1] == Approx(norm).epsilon(1e-5));
                REQUIRE(got[0] == Approx(max_norm > 0 ? std::min(1.0, max_norm / (norm + 1e-6)) : 1.0).epsilon(1e-5));
                if (max_norm == 0.5f) REQUIRE(got[0] < 0.5f);  // a gradient of norm ~3 is clipped hard
                ref::adamw(p, g, m, v, 3e-3, 0.9, 0.99, 1e-8, 0.1, t, decay_end);
            }
            test::require_close(download(gp, n), p, 1e-6, 1e-5, "params after 2 clipped AdamW steps");
            test::require_close(download(gm, n), m, 1e-7, 1e-5, "first moment of the clipped gradient");
        }
    }
}
