// Dropout's Philox masks against the CPU's.
#include "ops_common.h"

TEST_CASE("dropout: the GPU's Philox mask equals the CPU's, keeps about 1-p, and backward reuses it", "[ops]") {
    Rng r(8);
    const int n = 20001;
    const float prob = 0.2f;
    auto x = test::randn(r, n), res = test::randn(r, n), dout = test::randn(r, n);
    Buffer key(test::ctx(), 8, true);
    const uint32_t k[2] = {99u, 3u};
    key.upload(k, 8);
    auto gx = upload(x), gres = upload(res), gdout = upload(dout), out = zeros(n), dx = zeros(n);
    test::run([&](Program& p) {
        ops::dropout_forward(test::kernels(), p, out, gx, gres, key, n, 5, prob);
        ops::dropout_backward(test::kernels(), p, dx, gdout, key, n, 5, prob);
    });
    ref::Drop d;
    d.p = prob;
    d.site = 5;
    d.key[0] = k[0];
    d.key[1] = k[1];
    std::vector<double> ro, rdx;
    ref::dropout_forward(ro, x, &res, d);
    ref::dropout_backward(rdx, dout, d);
    test::require_close(download(out, n), ro, 1e-6, 1e-6, "residual + dropout(x)");
    test::require_close(download(dx, n), rdx, 1e-6, 1e-6, "dropout backward");
    int kept = 0;
    for (int i = 0; i < n; i++) kept += d.scale(i) > 0;
    CHECK(std::abs(kept / double(n) - 0.8) < 0.01);
    // another site or another step's key gives another mask
    ref::Drop d2 = d;
    d2.key[1] = 4;
    int same = 0;
    for (int i = 0; i < n; i++) same += (d.scale(i) > 0) == (d2.scale(i) > 0);
    CHECK(same < n * 0.8);

    // n % 4 == 0 at aligned offsets takes the vec4 kernels: the same bits as the scalar ones, element for element
    // (here from 16 bytes into each buffer, or the device's alignment when larger; the residual one way and plain
    // dropout the other)
    const auto& lim = test::ctx().props().limits;
    const uint32_t off = uint32_t(std::max<VkDeviceSize>({16, lim.minStorageBufferOffsetAlignment, lim.minTexelBufferOffsetAlignment}) / 4);
    const uint32_t n4 = (n - off) / 4 * 4;  // whole vec4s within the n floats
    for (bool with_res : {true, false}) {
        BufferRange x4(gx, off * 4, n4 * 4), res4(gres, off * 4, n4 * 4), dout4(gdout, off * 4, n4 * 4);
        auto out4 = zeros(n4 + off), dx4 = zeros(n4 + off), out1 = zeros(n4 + off), dx1 = zeros(n4 + off);
        BufferRange o4r(out4, off * 4, n4 * 4), d4r(dx4, off * 4, n4 * 4);
        REQUIRE(ops::vec4_views(test::ctx(), n4, {o4r, x4, res4, d4r, dout4}));  // the fast path runs
        REQUIRE(!ops::vec4_views(test::ctx(), n4 - 1, {o4r, x4, res4, d4r, dout4}));
        test::run([&](Program& p) {
            ops::dropout_forward(test::kernels(), p, o4r, x4, with_res ? res4 : BufferRange(), key, n4, 5, prob);
            ops::dropout_backward(test::kernels(), p, d4r, dout4, key, n4, 5, prob);
            // n4 - 1 elements: the scalar kernels (their last block covers element n4 - 1 too, which stays 0)
            ops::dropout_forward(test::kernels(), p, BufferRange(out1, off * 4, n4 * 4), x4,
                                 with_res ? res4 : BufferRange(), key, n4 - 1, 5, prob);
            ops::dropout_backward(test::kernels(), p, BufferRange(dx1, off * 4, n4 * 4), dout4, key, n4 - 1, 5, prob);
        });
        auto o4 = download(out4, n4 + off), o1 = download(out1, n4 + off), d4 = download(dx4, n4 + off),
             d1 = download(dx1, n4 + off);
        int diff = 0;
        for (uint32_t i = 0; i + 1 < n4; i++) diff += o4[i + off] != o1[i + off] || d4[i + off] != d1[i + off];
        CHECK(diff == 0);
        CHECK(o4[0] == 0.0f);  // nothing written before the range
        // and against the CPU reference, the last element included
        std::vector<double> xs(x.begin() + off, x.begin() + off + n4), rs(res.begin() + off, res.begin() + off + n4),
            ds(dout.begin() + off, dout.begin() + off + n4), ro4, rdx4;
        ref::dropout_forward(ro4, xs, with_res ? &rs : nullptr, d);
        ref::dropout_backward(rdx4, ds, d);
        test::require_close(std::vector<double>(o4.begin() + off, o4.begin() + off + n4), ro4, 1e-6, 1e-6, "vec4 dropout");
        test::require_close(std::vector<double>(d4.begin() + off, d4.begin() + off + n4), rdx4, 1e-6, 1e-6,
                            "vec4 dropout backward");
    }
}
