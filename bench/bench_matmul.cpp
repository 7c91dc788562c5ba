// Benchmark: GFLOP/s of the linear-layer kernels (forward, backward's dinp part, its dw + dbias part) at
// the gpt preset's shapes and the small models' (C64: small GPT, M = 512; C32: the lecture's stages, M = 256;
// C128: nanogpt-cpu, M = 384 a replica),
// the head (vocabulary 65) with its logits and their gradient in rows padded to 68 as the model lays them out,
// on the current device. Prints one row per shape.
//   attn_bench_matmul [M]   (M = rows = batch*block; default 2048, the gpt preset at batch 8)
// The dw column includes the second pass when this device splits dw's sum over rows (ops/reduce.h; the
// splits column; ATTNLAB_ROW_SPLITS=n forces n).
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ops/matmul.h"

using namespace attn;

int main(int argc, char** argv) {
    uint32_t M = argc > 1 ? uint32_t(std::atoi(argv[1])) : 2048;
    try {
        ContextOptions co;
        Context ctx(co);
        KernelCache kc(ctx);
        struct Shape { const char* what; uint32_t N, K; bool relu; };
        const Shape shapes[] = {{"qkv  384->1152", 1152, 384, false}, {"proj 384->384", 384, 384, false},
                                {"ffn1 384->1536", 1536, 384, true},  {"ffn2 1536->384", 384, 1536, false},
                                {"head 384->65", 65, 384, false},     {"C64 64->256", 256, 64, true},
                                {"C64 64->192", 192, 64, false},      {"C64 256->64", 64, 256, false},
                                {"C64 64->64", 64, 64, false},        {"C32 32->128", 128, 32, true},
                                {"C32 32->96", 96, 32, false},        {"C32 32->65", 65, 32, false},
                                {"C32 32->32", 32, 32, false},
                                {"C128 128->384", 384, 128, false}, {"C128 128->128", 128, 128, false},
                                {"C128 128->512", 512, 128, false}, {"C128 512->128", 128, 512, false}};
        std::printf("M = %u rows\n%-16s %12s %12s %12s %7s\n", M, "shape", "fwd GFLOP/s", "dinp GFLOP/s", "dw GFLOP/s",
                    "splits");
        for (const Shape& s : shapes) {
            // N % 4 != 0 (the head): dout in rows padded to a multiple of 4, as the model's dlogits are
            bool padded = s.N % 4 != 0;
            uint32_t ld = padded ? ops::matmul_dout_ld(s.N, s.K) : s.N;
            std::vector<float> a(size_t(M) * s.K, 0.01f), w(size_t(s.N) * s.K, 0.02f), g(size_t(M) * ld, 0.03f);
            for (size_t m = 0; m < M; m++)
                for (uint32_t n = s.N; n < ld; n++) g[m * ld + n] = 0.0f;
            Buffer inp(ctx, a.size() * 4), wb(ctx, w.size() * 4), bias(ctx, s.N * 4), out(ctx, g.size() * 4),
                dout(ctx, g.size() * 4), dinp(ctx, a.size() * 4), dw(ctx, w.size() * 4), db(ctx, s.N * 4);
            inp.upload(a);
            wb.upload(w);
            dout.upload(g);
            bias.fill_zero();
            uint32_t splits = ops::matmul_backward_splits(ctx, M, s.N, s.K, padded);
            Buffer scratch(ctx, std::max<size_t>(4, ops::matmul_backward_scratch(s.N, s.K, true, splits) * 4));
            // segmented with an unbounded budget: one submit, but dinp and dw are separate (profiled) dispatches
            Program p(ctx, true, 1e30);
            p.begin();
            ops::matmul_forward(kc, p, out, inp, wb, bias, M, s.N, s.K, true, s.relu, {},
                                padded ? ops::matmul_forward_ld(ctx, s.N, s.K) : s.N);
            p.barrier("backward reads out");
            ops::matmul_backward(kc, p, {.dinp = dinp, .dw = dw, .dbias = db, .dout = dout, .inp = inp, .w = wb,
                .out = out, .M = uint32_t(M), .N = uint32_t(s.N), .K = uint32_t(s.K), .has_bias = true, .relu = s.relu,
                .scratch = scratch, .splits = splits, .dout_padded = padded});
            p.end();
            p.run();  // warm-up (JIT)
            double t[3] = {1e30, 1e30, 1e30};
            for (int rep = 0; rep < 3; rep++) {
                p.run();
                auto kt = p.kernel_times();  // fwd, dinp, dw (+ the second pass when split)
                double sum[3] = {0, 0, 0};
                for (size_t i = 0; i < kt.size(); i++) sum[std::min<size_t>(i, 2)] += kt[i].second;
                for (int i = 0; i < 3; i++) t[i] = std::min(t[i], sum[i]);
            }
            double flop = 2.0 * M * s.N * s.K;
            std::printf("%-16s %12.2f %12.2f %12.2f %7u\n", s.what, flop / t[0] * 1e-6, flop / t[1] * 1e-6,
                        flop / t[2] * 1e-6, splits);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
