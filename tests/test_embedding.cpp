// Embedding lookup and its backward against the CPU reference.
#include "ops_common.h"

TEST_CASE("embedding forward and backward match the CPU reference", "[ops]") {
    Rng r(1);
    for (int C : {13, 16}) {  // 16: the vec4 kernels
        INFO("C = " << C);
        const int B = 3, T = 7, V = 11, N = 40;
        std::vector<uint32_t> tokens(N), off(B);
        for (auto& t : tokens) t = uint32_t(r.below(V));
        for (auto& o : off) o = uint32_t(r.below(N - T));
        auto wte = test::randn(r, V * C), wpe = test::randn(r, T * C), dout = test::randn(r, B * T * C);
        auto gtok = upload(tokens), goff = upload(off), gwte = upload(wte), gwpe = upload(wpe), gdout = upload(dout);
        // the gradients start stale: the backward overwrites them
        auto out = zeros(B * T * C), dwte = upload(test::randn(r, V * C)), dwpe = upload(test::randn(r, T * C));
        test::run([&](Program& p) {
            ops::embedding_forward(test::kernels(), p, out, gtok, goff, gwte, gwpe, B, T, C, true);
            ops::embedding_backward(test::kernels(), p, dwte, dwpe, gdout, gtok, goff, B, T, C, V, true);
        });
        std::vector<double> ro, rdwte, rdwpe;
        ref::embedding_forward(ro, tokens, off, wte, &wpe, B, T, C);
        ref::embedding_backward(rdwte, &rdwpe, dout, tokens, off, B, T, C, V);
        test::require_close(download(out, B * T * C), ro, 1e-6, 1e-6, "embedding out");
        test::require_close(download(dwte, V * C), rdwte, 1e-5, 1e-5, "dwte");
        test::require_close(download(dwpe, T * C), rdwpe, 1e-5, 1e-5, "dwpe");
        // the reference backward is the gradient of sum(out * dout)
        auto f = [&](const std::vector<double>& w) {
            std::vector<double> o;
            ref::embedding_forward(o, tokens, off, w, &wpe, B, T, C);
            return dot(o, dout);
        };
        test::require_close(rdwte, fd_grad(f, wte), 1e-6, 1e-6, "dwte vs finite differences");
    }
}
