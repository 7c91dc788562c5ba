// Every kernel against its CPU reference on seeded random input (odd shapes), backward also against finite differences.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "gpu.h"
#include "ops/adamw.h"
#include "ops/attention.h"
#include "ops/crossentropy.h"
#include "ops/dropout.h"
#include "ops/layernorm.h"
#include "ops/embedding.h"
#include "ops/matmul.h"
#include "reference/ops_ref.h"
#include "train/trainer.h"

using namespace attn;
using test::download;
using test::upload;
using test::zeros;

// Central differences of f at x, in double on the CPU reference.
static std::vector<double> fd_grad(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x,
                                   double eps = 1e-5) {
    std::vector<double> g(x.size());
    for (size_t i = 0; i < x.size(); i++) {
        double keep = x[i];
        x[i] = keep + eps;
        double fp = f(x);
        x[i] = keep - eps;
        double fm = f(x);
        x[i] = keep;
        g[i] = (fp - fm) / (2 * eps);
    }
    return g;
}
static double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); i++) s += a[i] * b[i];
    return s;
}

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
                ops::matmul_backward(test::kernels(), p, dinp, dw, db, gdout, ginp, gw, out, M, N, K, true, relu, true,
                                     accumulate, scratch, splits);
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

// Attention forward and backward on the GPU (B, T, NH, HS; dropout `prob` at site 4 with `key` = k), checked
// against the CPU reference: out, att and dqkv. stale: att and dpre start random (every element must be written).
struct AttentionRun {
    std::vector<double> qkv, dout, att, ref_dqkv;
    ref::Drop rd;
};
static AttentionRun check_attention(Rng& r, const Buffer& key, const uint32_t k[2], int B, int T, int NH, int HS,
                                    bool causal, float prob, bool stale) {
    const int C = NH * HS;
    AttentionRun a;
    a.rd.p = prob;
    a.rd.site = 4;
    a.rd.key[0] = k[0];
    a.rd.key[1] = k[1];
    ops::AttnDropout gd{prob, 4, key};
    a.qkv = test::randn(r, B * T * 3 * C);
    a.dout = test::randn(r, B * T * C);
    auto gqkv = upload(a.qkv), gdout = upload(a.dout);
    auto fill = [&](size_t n) { return stale ? upload(test::randn(r, n)) : zeros(n); };
    auto out = zeros(B * T * C), att = fill(B * NH * T * T), dpre = fill(B * NH * T * T), dqkv = zeros(B * T * 3 * C);
    test::run([&](Program& p) {
        ops::attention_forward(test::kernels(), p, out, att, gqkv, B, T, NH, HS, causal, gd);
        p.barrier("backward reads att");
        ops::attention_backward(test::kernels(), p, dqkv, dpre, gdout, gqkv, att, out, B, T, NH, HS, causal, gd);
    });
    std::vector<double> ro, ratt;
    ref::attention_forward(ro, ratt, a.qkv, B, T, NH, HS, causal, a.rd);
    ref::attention_backward(a.ref_dqkv, a.dout, a.qkv, ratt, B, T, NH, HS, a.rd);
    test::require_close(download(out, B * T * C), ro, 1e-5, 1e-5, "attention out");
    a.att = download(att, B * NH * T * T);
    test::require_close(a.att, ratt, 1e-6, 1e-5, "attention weights");
    test::require_close(download(dqkv, B * T * 3 * C), a.ref_dqkv, 1e-5, 1e-4, "dqkv");
    return a;
}

TEST_CASE("attention forward and backward match the CPU reference and finite differences", "[ops]") {
    Rng r(3);
    // HS 5: the scalar kernels; HS 8 and 12: the vec4 kernels (attention_vec4). T 9 and 12: on CPU devices the row
    // kernels (T > 8), with T % 4 == 0 attention_backward4 taking dropout's Philox blocks whole (spec bit 17)
    const auto [NH, HS] = GENERATE(std::pair{3, 5}, std::pair{2, 8}, std::pair{1, 12});
    const int B = 2, T = GENERATE(9, 12);
    Buffer key(test::ctx(), 8, true);
    const uint32_t k[2] = {12345u, 7u};
    key.upload(k, 8);
    for (auto [causal, prob] : {std::pair{true, 0.0f}, std::pair{false, 0.0f}, std::pair{true, 0.3f}, std::pair{false, 0.3f}}) {
        INFO("NH " << NH << " HS " << HS << " causal " << causal << " dropout " << prob);
        AttentionRun a = check_attention(r, key, k, B, T, NH, HS, causal, prob, false);
        const auto &qkv = a.qkv, &dout = a.dout, &gatt = a.att, &rdqkv = a.ref_dqkv;
        const ref::Drop& rd = a.rd;
        if (causal) {
            // the future is masked: exact zeros above the diagonal, rows sum to 1
            for (int bh = 0; bh < B * NH; bh++)
                for (int t = 0; t < T; t++) {
                    double sum = 0;
                    for (int t2 = 0; t2 < T; t2++) {
                        double a = gatt[(bh * T + t) * T + t2];
                        if (t2 > t) REQUIRE(a == 0.0);
                        sum += a;
                    }
                    REQUIRE(sum == Approx(1.0).epsilon(1e-5));
                }
        }
        auto f = [&](const std::vector<double>& x) {
            std::vector<double> o, a;
            ref::attention_forward(o, a, x, B, T, NH, HS, causal, rd);
            return dot(o, dout);
        };
        test::require_close(rdqkv, fd_grad(f, qkv), 1e-6, 1e-4, "dqkv vs finite differences");
    }
}

TEST_CASE("attention_forward4: the row of scores in registers (T <= 16) gives the same bits as in memory", "[ops]") {
    // Causal rows t < 16 see keys 0..t only, so T 16 (registers) and T 20 (memory) must agree to the bit on them.
    REQUIRE(ops::attention_forward4_spec(16, 16) == (4u | 4u << 8));  // T 16: the register path
    REQUIRE(ops::attention_forward4_spec(20, 16) == 4u);              // T 20: the memory path
    REQUIRE(ops::attention_forward4_spec(8, 128) == (32u | 2u << 8));  // the largest head size fits its 8 bits
    Rng r(21);
    test::PolicyGuard pol;
    pol->attention = AttentionChoice::rows;
    pol->attention_rows = 1;  // attention_forward4 (CPU devices take attention_forward_rows4 otherwise: the next test)
    const int NH = 2, HS = 16, C = NH * HS;
    Buffer key(test::ctx(), 8, true);
    key.fill_zero();
    ops::AttnDropout none{0.0f, 4, key};
    auto qkvL = test::randn(r, 20 * 3 * C);
    std::vector<double> qkvS(qkvL.begin(), qkvL.begin() + 16 * 3 * C);
    auto gL = upload(qkvL), gS = upload(qkvS);
    auto outL = zeros(20 * C), outS = zeros(16 * C), attL = zeros(NH * 20 * 20), attS = zeros(NH * 16 * 16);
    test::run([&](Program& p) {
        ops::attention_forward(test::kernels(), p, outL, attL, gL, 1, 20, NH, HS, true, none);
        ops::attention_forward(test::kernels(), p, outS, attS, gS, 1, 16, NH, HS, true, none);
    });
    auto oL = download(outL, 20 * C), oS = download(outS, 16 * C);
    auto aL = download(attL, NH * 20 * 20), aS = download(attS, NH * 16 * 16);
    int diff = 0;
    for (int i = 0; i < 16 * C; i++) diff += oL[i] != oS[i];
    for (int h = 0; h < NH; h++)
        for (int t = 0; t < 16; t++)
            for (int t2 = 0; t2 < 16; t2++) diff += aL[(h * 20 + t) * 20 + t2] != aS[(h * 16 + t) * 16 + t2];
    CHECK(diff == 0);
}

TEST_CASE("attention_forward_rows4: four query rows an invocation give the bits of one row an invocation", "[ops]") {
    // attention_forward_rows4 (CPU devices, T % 4 == 0, T <= 32, HS <= 64) against attention_forward4
    // (ATTNLAB_ATTENTION_ROWS=1): the same operations in the same order for every row, so att and out agree to the bit.
    // T 12 and 16 (the register path of attention_forward4), 32 (its memory path); head sizes 16, 8 and 64; the mask on
    // and off, dropout 0 and 0.3.
    Rng r(29);
    test::PolicyGuard pol;
    pol->attention = AttentionChoice::rows;
    REQUIRE(ops::attention_forward_rows4_spec(32, 16) == (4u | 8u << 8));
    Buffer key(test::ctx(), 8, true);
    const uint32_t k[2] = {41u, 9u};
    key.upload(k, 8);
    bool cpu = test::ctx().props().deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    for (int T : {12, 16, 32})
    for (auto [NH, HS] : {std::pair{4, 16}, std::pair{2, 8}, std::pair{1, 64}})
    for (auto [causal, prob] : {std::pair{true, 0.0f}, std::pair{false, 0.0f}, std::pair{true, 0.3f}, std::pair{false, 0.3f}}) {
        const int B = 3, C = NH * HS;
        INFO("T " << T << " NH " << NH << " HS " << HS << " causal " << causal << " dropout " << prob);
        ops::AttnDropout gd{prob, 5, key};
        auto gqkv = upload(test::randn(r, B * T * 3 * C));
        std::vector<double> out[2], att[2];
        for (int v = 0; v < 2; v++) {
            pol->attention_rows = v == 0 ? 1 : 4;
            REQUIRE(ops::attention_forward_rows4(test::ctx(), T, HS) == (v == 1 && cpu));
            auto o = zeros(B * T * C), a = upload(std::vector<float>(size_t(B) * NH * T * T, 7.0f));  // every entry written
            test::run([&](Program& p) { ops::attention_forward(test::kernels(), p, o, a, gqkv, B, T, NH, HS, causal, gd); });
            out[v] = download(o, B * T * C), att[v] = download(a, size_t(B) * NH * T * T);
        }
        int diff = 0;
        for (size_t i = 0; i < out[0].size(); i++) diff += out[0][i] != out[1][i];
        for (size_t i = 0; i < att[0].size(); i++) diff += att[0][i] != att[1][i];
        CHECK(diff == 0);
    }
    pol->attention_rows = 4;
    CHECK_FALSE(ops::attention_forward_rows4(test::ctx(), 36, 16));  // longer rows and wider heads: attention_forward4
    CHECK_FALSE(ops::attention_forward_rows4(test::ctx(), 32, 128));
    CHECK_FALSE(ops::attention_forward_rows4(test::ctx(), 30, 16));
    pol->attention_rows = 1;
    CHECK_FALSE(ops::attention_forward_rows4(test::ctx(), 32, 16));
}

TEST_CASE("attention: the GPU's shared-memory kernels and the CPU's row kernels match the reference", "[ops]") {
    // Both kernel families whatever the device (the default takes one of them). T 8: one tile; T 132: two tiles
    // of query and key positions (the second partial, causal tiles skipped above the diagonal); head sizes 8 and
    // 12 (a partial 16-wide slice), 64 (the gpt preset's) and 132 (two column tiles; the scalar row kernels);
    // the mask on and off, dropout 0 and 0.3.
    Rng r(13);
    test::PolicyGuard pol;
    Buffer key(test::ctx(), 8, true);
    const uint32_t k[2] = {777u, 3u};
    key.upload(k, 8);
    for (AttentionChoice kind : {AttentionChoice::smem, AttentionChoice::rows, AttentionChoice::block}) {
    if (kind == AttentionChoice::smem && !ops::smem_fits(test::ctx())) continue;  // this GPU's limits are too small
    // rows: 8 and 16 keep the row of scores in registers (attention_forward4), 132 not; block: T 8 with head sizes 8
    // and 12 a whole block an invocation (attention_forward_block, attention_backward_block), the rest as rows
    for (int T : {8, 16, 132})
    for (auto [NH, HS] : {std::pair{2, 8}, std::pair{1, 12}, std::pair{1, 64}, std::pair{1, 132}})
    for (auto [causal, prob] : {std::pair{true, 0.0f}, std::pair{false, 0.0f}, std::pair{true, 0.3f}, std::pair{false, 0.3f}}) {
        const int B = 2;
        INFO(int(kind) << " (1 block, 2 rows, 3 smem) T " << T << " NH " << NH << " HS " << HS << " causal " << causal
                       << " dropout " << prob);
        pol->attention = kind;
        check_attention(r, key, k, B, T, NH, HS, causal, prob, true);  // stale att and dpre must not leak
    }
    }
}

TEST_CASE("attention block kernels: a whole (T,T) block an invocation gives the row kernels' bits", "[ops]") {
    // The lecture's short blocks on CPU devices (attention_forward_block, attention_backward_block): each row fetched
    // once per (b, h) instead of once per row or pair of rows, the same sums in the same order as attention_forward4
    // and attention_backward4, so out, att, dq, dk and dv must agree to the bit; T 8 and 5 (not a multiple of 4: the
    // forward stays the row kernel), head sizes 32 (single-head), 8 (layernorm's 4 heads) and 12, the mask on and
    // off, dropout 0 and 0.3. Against the CPU reference they are checked by the test above (block).
    // To the bit where they run, on CPU devices: lavapipe compiles both kernels' sums alike. A GPU keeps the row
    // kernels, and its compiler may fuse a multiply and an add in one kernel and not in the other (seen on an NVIDIA
    // H200: dqkv differed in the last bits, out and att matched): there they must agree to 1e-5.
    const bool bits = test::ctx().props().deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    Rng r(22);
    test::PolicyGuard pol;
    Buffer key(test::ctx(), 8, true);
    const uint32_t k[2] = {4242u, 9u};
    key.upload(k, 8);
    for (int T : {8, 5})
    for (auto [NH, HS] : {std::pair{1, 32}, std::pair{4, 8}, std::pair{2, 12}})
    for (auto [causal, prob] : {std::pair{true, 0.0f}, std::pair{false, 0.0f}, std::pair{true, 0.3f}, std::pair{false, 0.3f}}) {
        const int B = 3, C = NH * HS;
        INFO("T " << T << " NH " << NH << " HS " << HS << " causal " << causal << " dropout " << prob);
        ops::AttnDropout gd{prob, 4, key};
        auto gqkv = upload(test::randn(r, B * T * 3 * C)), gdout = upload(test::randn(r, B * T * C));
        std::vector<float> res[2][3];  // rows, block: out, att, dqkv
        for (int kind = 0; kind < 2; kind++) {
            pol->attention = kind == 0 ? AttentionChoice::rows : AttentionChoice::block;
            REQUIRE(ops::attention_block(test::ctx(), T, HS) == (kind == 1));
            auto out = zeros(B * T * C), att = zeros(B * NH * T * T), dpre = zeros(B * NH * T * T),
                 dqkv = zeros(B * T * 3 * C);
            test::run([&](Program& p) {
                ops::attention_forward(test::kernels(), p, out, att, gqkv, B, T, NH, HS, causal, gd);
                p.barrier("backward reads att");
                ops::attention_backward(test::kernels(), p, dqkv, dpre, gdout, gqkv, att, out, B, T, NH, HS, causal, gd);
            });
            res[kind][0] = out.read<float>(B * T * C);
            res[kind][1] = att.read<float>(B * NH * T * T);
            res[kind][2] = dqkv.read<float>(B * T * 3 * C);
        }
        for (int w = 0; w < 3; w++) {
            INFO((w == 0 ? "out" : w == 1 ? "att" : "dqkv"));
            int diff = 0;
            for (size_t i = 0; i < res[0][w].size(); i++) {
                float a = res[0][w][i], b = res[1][w][i];
                diff += bits ? a != b : !(std::fabs(a - b) <= 1e-5f * std::max(1.0f, std::fabs(a)));
            }
            CHECK(diff == 0);
        }
    }
    pol->attention = AttentionChoice::block;
    CHECK(!ops::attention_block(test::ctx(), 9, 8));   // longer blocks: the row kernel
    CHECK(!ops::attention_block(test::ctx(), 8, 64));  // rows too wide to keep
}

TEST_CASE("attention_backward4: several rows an invocation give the bits of one row an invocation", "[ops]") {
    // RB rows of dq (or of dk and dv) an invocation (ops::attention_backward_rows: 4 on CPU devices) fetch each row of
    // k, v, dout, out and q once for RB rows; every row's sums keep their order, so dqkv must agree to the bit with
    // RB 1. T 9, 30 and 70 (the last block partial for RB 4 and 8), T 12 and 32; with RB > 1 up to T 64 (b, h)
    // varies fastest between invocations, past it the row blocks, with RB 1 t (attention_backward4_spec); head sizes
    // 16 (the small GPT's) and 8; the mask on and off, dropout 0 and 0.3. Where T % 4 == 0, att is read 4 keys a
    // fetch (spec bit 18) unless the policy's attention_att4 is off: the reference here is RB 1 with one a fetch (T 12 with
    // RB 8: a key block's second 4 columns past the row). Against the CPU reference they are checked by the tests
    // above (rows).
    Rng r(23);
    test::PolicyGuard pol;
    pol->attention = AttentionChoice::rows;
    Buffer key(test::ctx(), 8, true);
    const uint32_t k[2] = {99u, 5u};
    key.upload(k, 8);
    REQUIRE(ops::attention_backward4_spec(64, 16, 4) == (4u | 4u << 8 | 1u << 16 | 1u << 17));
    REQUIRE(ops::attention_backward4_spec(70, 64, 1) == (16u | 1u << 8));
    REQUIRE(ops::attention_backward4_spec(30, 16, 4) == (4u | 4u << 8 | 1u << 16));
    REQUIRE(ops::attention_backward4_spec(32, 16, 1) == (4u | 1u << 8 | 1u << 17));
    REQUIRE(ops::attention_backward4_spec(32, 16, 4, true) == (4u | 4u << 8 | 1u << 16 | 1u << 17 | 1u << 18));
    REQUIRE(ops::attention_backward4_spec(30, 16, 4, true) == (4u | 4u << 8 | 1u << 16));
    for (int T : {9, 12, 30, 32, 70})
    for (auto [NH, HS] : {std::pair{4, 16}, std::pair{2, 8}})
    for (auto [causal, prob] : {std::pair{true, 0.0f}, std::pair{false, 0.0f}, std::pair{true, 0.3f}, std::pair{false, 0.3f}}) {
        const int B = 2, C = NH * HS;
        INFO("T " << T << " NH " << NH << " HS " << HS << " causal " << causal << " dropout " << prob);
        ops::AttnDropout gd{prob, 4, key};
        auto gqkv = upload(test::randn(r, B * T * 3 * C)), gdout = upload(test::randn(r, B * T * C));
        auto out = zeros(B * T * C), att = zeros(B * NH * T * T);
        pol->attention_rows = 1;
        test::run([&](Program& p) { ops::attention_forward(test::kernels(), p, out, att, gqkv, B, T, NH, HS, causal, gd); });
        std::vector<float> res[5];
        const char* rbs[5] = {"1", "4", "8", "1", "4"};
        for (int v = 0; v < 5; v++) {
            pol->attention_rows = std::atoi(rbs[v]);
            pol->attention_att4 = !(v == 0 || v == 4);  // the reference, and RB 4 without the vec4 reads of att
            REQUIRE(ops::attention_backward_rows(test::ctx()) == uint32_t(std::atoi(rbs[v])));
            auto dpre = zeros(B * NH * T * T), dqkv = zeros(B * T * 3 * C);
            test::run([&](Program& p) {
                ops::attention_backward(test::kernels(), p, dqkv, dpre, gdout, gqkv, att, out, B, T, NH, HS, causal, gd);
            });
            res[v] = dqkv.read<float>(B * T * 3 * C);
        }
        for (int v = 1; v < 5; v++) {
            INFO("RB " << rbs[v] << (v == 4 ? ", att one a fetch" : ""));
            int diff = 0;
            for (size_t i = 0; i < res[0].size(); i++) diff += res[0][i] != res[v][i];
            CHECK(diff == 0);
        }
    }
}

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
        CHECK_THROWS_WITH(ops::matmul_backward(test::kernels(), p, d, dw, db, g, x, w, g, M, 16, F, true, false, false,
                                               false, {}, 1, false, true),
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
                ops::matmul_backward(test::kernels(), p, dh, dw2, db2, dy, h, fc2, dy, M, C, F, true, false, true, false,
                                     {}, 1, false, fused == 1);
                p.barrier("fc's backward reads dh");
                ops::matmul_backward(test::kernels(), p, dx, dw, db, dh, x, fc, h, M, F, K, true, fused == 0, true, acc);
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
            ops::matmul_backward(test::kernels(), p, dinp, dw, db, gdout, ginp, gw, out, M, N, K, has_bias, relu,
                                 want_dinp, accumulate, scratch, splits);
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
            ops::matmul_backward(test::kernels(), p, dinp2, dw2, db2, gdpad, ginp, gw, out, M, N, K, has_bias, false,
                                 want_dinp, accumulate, scratch, splits, true);
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
                          ops::matmul_backward(test::kernels(), p, b, b, b, b, b, b, b, 8, 19, 8, true, true, true, false,
                                               {}, 1, true);
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
        REQUIRE(ops::dropout_vec4(test::ctx(), n4, {o4r, x4, res4, d4r, dout4}));  // the fast path runs
        REQUIRE(!ops::dropout_vec4(test::ctx(), n4 - 1, {o4r, x4, res4, d4r, dout4}));
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

TEST_CASE("a program cut into many submits computes the same bits as one submit", "[ops]") {
    // Segmented programs (big models, so the window's frames run between submits) split dispatches into
    // workgroup ranges with vkCmdDispatchBase: along x, and along y for grids taller than one row.
    // Twice: the device's default kernels, then the GPU's shared-memory ones forced (their workgroups take their
    // index from gl_WorkGroupID: M 300 gives three 128-row tiles, attention four heads of one tile each).
    test::PolicyGuard pol;
    for (bool smem : {false, true}) {
    if (smem && !ops::smem_fits(test::ctx())) continue;
    INFO("smem kernels forced: " << smem);
    if (smem) pol->matmul = MatmulChoice::smem, pol->attention = AttentionChoice::smem;
    Rng r(11);
    // B 24: attention_backward4 at 4 rows an invocation (CPU devices) still spans nine workgroups, cut into pieces
    // of 4 (Program::dispatch's least)
    const uint32_t M = 300, N = 68, K = 40, B = 24, T = 24, NH = 2, HS = 8, C = NH * HS;
    auto inp = upload(test::randn(r, M * K)), w = upload(test::randn(r, N * K)), bias = upload(test::randn(r, N));
    auto dout = upload(test::randn(r, M * N));
    auto qkv = upload(test::randn(r, B * T * 3 * C)), adout = upload(test::randn(r, B * T * C));
    // plain matmul over 4.5M outputs: more than 65535 workgroups of 64, so its grid has two rows
    const uint32_t BM = 4096, BN = 1100, BK = 3;
    auto binp = upload(test::randn(r, BM * BK)), bw = upload(test::randn(r, BN * BK));
    // and over 200k outputs: 3125 workgroups in one row, cut along x
    const uint32_t XM = 2000, XN = 100;
    Buffer key(test::ctx(), 8, true);
    const uint32_t k[2] = {9u, 4u};
    key.upload(k, 8);
    auto run = [&](double budget, size_t& submits) {
        auto out = zeros(M * N), dinp = zeros(M * K), dw = zeros(N * K), db = zeros(N);
        auto aout = zeros(B * T * C), att = zeros(B * NH * T * T), dpre = zeros(B * NH * T * T), dqkv = zeros(B * T * 3 * C);
        auto bout = zeros(BM * BN), xout = zeros(XM * XN);
        Program p(test::ctx(), false, budget);
        p.begin();
        ops::matmul_forward(test::kernels(), p, out, inp, w, bias, M, N, K, true, true);
        ops::attention_forward(test::kernels(), p, aout, att, qkv, B, T, NH, HS, true, {0.2f, 3, key});
        ops::matmul_forward(test::kernels(), p, bout, binp, bw, bias, BM, BN, BK, false);
        ops::matmul_forward(test::kernels(), p, xout, binp, bw, bias, XM, XN, BK, false);
        p.barrier("backward reads the forward outputs");
        ops::matmul_backward(test::kernels(), p, dinp, dw, db, dout, inp, w, out, M, N, K, true, true, true, false);
        ops::attention_backward(test::kernels(), p, dqkv, dpre, adout, qkv, att, aout, B, T, NH, HS, true, {0.2f, 3, key});
        p.end();
        p.run();
        submits = p.submit_count();
        std::vector<std::vector<float>> all;
        for (auto* b : {&out, &dinp, &dw, &db, &aout, &att, &dqkv, &bout, &xout}) all.push_back(b->read<float>(b->bytes() / 4));
        return all;
    };
    size_t one = 0, many = 0;
    auto want = run(0, one);
    auto got = run(2e4, many);
    REQUIRE(one == 1);
    REQUIRE(many >= 10);
    for (size_t i = 0; i < want.size(); i++) {
        INFO("output " << i);
        REQUIRE(got[i] == want[i]);
    }
    }
}

TEST_CASE("a segmented program dispatches whole what fits its budget and cuts the rest into pieces of 4 workgroups",
          "[ops]") {
    // K 3: the plain matmul kernel, one invocation an output: 64 x 10 outputs are 10 workgroups of 64, cost 1920
    const uint32_t M = 64, N = 10, K = 3;
    Rng r(5);
    auto inp = upload(test::randn(r, M * K)), w = upload(test::randn(r, N * K)), bias = upload(test::randn(r, N));
    auto out = zeros(M * N);
    auto record = [&](double budget) {
        auto p = std::make_unique<Program>(test::ctx(), false, budget);
        p->begin();
        ops::matmul_forward(test::kernels(), *p, out, inp, w, bias, M, N, K, true);
        p->end();
        return p;
    };
    auto unbounded = record(1e30);  // once split into one-workgroup pieces: the budget overflowed a 64-bit count
    REQUIRE(unbounded->piece_count() == 1);
    REQUIRE(unbounded->submit_count() == 1);
    // a budget under one workgroup's cost: pieces of 4, 4 and 2 workgroups (lavapipe shares each piece's
    // workgroups between its threads: one-workgroup pieces ran on one core), each its own submit
    auto tiny = record(1);
    REQUIRE(tiny->piece_count() == 3);
    REQUIRE(tiny->submit_count() == 3);
    // 5 workgroups (192 each) fit a budget of 1000: two pieces of 5 in two submits
    auto fives = record(1000);
    REQUIRE(fives->piece_count() == 2);
    REQUIRE(fives->submit_count() == 2);
    fives->run();
    auto got = download(out, M * N);
    auto want_prog = record(0);
    want_prog->run();
    REQUIRE(download(out, M * N) == got);
}

TEST_CASE("on a CPU driver a dispatch's partial last workgroup runs as workgroups of its vector width", "[ops]") {
    // lavapipe runs a workgroup of 64 as 8 passes of 8 lanes, and passes whose lanes have all returned cost most of
    // what busy ones do: Program::dispatch runs the whole workgroups, then the rest as workgroups of the vector width
    // (Kernel::narrow_pipeline, index.glsl's specialisation constant 1). GPUs keep one dispatch.
    uint32_t lanes = test::ctx().cpu_simd_width();
    bool cpu = test::ctx().props().deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    INFO("vector width " << lanes);
    REQUIRE((lanes > 0) == cpu);
    // shaders with a fixed workgroup size (shared memory, barriers) have no narrow twin
    REQUIRE(test::kernels().get("attention_softmax", 2, sizeof(ops::AttnSoftmaxPush)).narrow_pipeline(8) ==
            VK_NULL_HANDLE);
    REQUIRE((test::kernels().get("embedding_forward4", "ssvvs", sizeof(ops::EmbeddingPush)).narrow_pipeline(lanes) !=
             VK_NULL_HANDLE) == cpu);
    Rng r(12);
    const uint32_t K = 8, N = 112;  // 7 column tiles of 16
    // M 160: 70 tiles, one workgroup of 64 and a tail of 6; M 80: 35, all tail; M 144: 63, all tail; M 128 with
    // N 128: 64, one whole workgroup
    // pipelines are made on first use: a kernel whose dispatch is all tail never compiles its wide pipeline
    struct Case { uint32_t M, N; size_t pieces_cpu; };
    for (Case c : {Case{160, N, 2}, Case{80, N, 1}, Case{144, N, 1}, Case{128, 128, 1}}) {
        INFO("M " << c.M << " N " << c.N);
        auto inp = test::randn(r, c.M * K), w = test::randn(r, c.N * K), bias = test::randn(r, c.N);
        auto ginp = upload(inp), gw = upload(w), gb = upload(bias), out = zeros(c.M * c.N);
        KernelCache fresh(test::ctx());
        Program p(test::ctx());
        p.begin();
        ops::matmul_forward(fresh, p, out, ginp, gw, gb, c.M, c.N, K, true);
        p.end();
        REQUIRE(p.dispatch_count() == 1);
        REQUIRE(p.piece_count() == (cpu ? c.pieces_cpu : 1));
        REQUIRE(fresh.pipelines_made() == int(p.piece_count()));
        p.run();
        std::vector<double> ro;
        ref::matmul_forward(ro, inp, w, &bias, c.M, c.N, K);
        test::require_close(download(out, c.M * c.N), ro, 1e-5, 1e-5, "inp @ w^T + bias");
    }
}

TEST_CASE("kernels specialised without the parts a dispatch leaves unused give the unspecialised kernels' bits",
          "[ops]") {
    // kflag (engine/vk/program.h): each op compiles its pipelines without the optional parts its push constants leave
    // off (lavapipe would run them masked); ATTNLAB_KERNEL_FLAGS=all keeps every part. Every combination the ops pick,
    // both ways, bit for bit. ATTNLAB_NARROW_TAIL=0 also runs each with workgroups of 64 only.
    test::PolicyGuard pol;
    Rng r(13);
    // runs `record` three ways (specialised; every part; every part in workgroups of 64) and requires the same bits of
    // `outs` each way
    auto three_ways = [&](const std::function<void(Program&)>& record, const std::vector<Buffer*>& outs) {
        std::vector<std::vector<std::vector<float>>> got;  // [way][output]
        for (int way = 0; way < 3; way++) {
            pol->all_kernel_flags = way >= 1;
            pol->narrow_tail = way != 2;
            for (Buffer* b : outs) std::memset(b->mapped(), 0, b->bytes());
            test::run(record);
            got.emplace_back();
            for (Buffer* b : outs) got.back().push_back(b->read<float>(b->bytes() / 4));
        }
        pol.reset();
        REQUIRE(got[0] == got[1]);
        REQUIRE(got[1] == got[2]);
    };
    auto host = [&](size_t n, double scale = 1.0) {  // host-visible, so that each way starts from the same zeros
        Buffer b(test::ctx(), n * 4, true);
        auto v = test::randn(r, n, scale);
        std::vector<float> f(v.begin(), v.end());
        std::memcpy(b.mapped(), f.data(), n * 4);
        return b;
    };
    const uint32_t M = 37, N = 24, K = 20;  // tiled kernels (K % 4 == 0), a tail of tiles
    Buffer inp = host(M * K), w = host(N * K), bias = host(N), res = host(M * N), dout = host(M * N);
    Buffer out(test::ctx(), M * N * 4, true), fwd(test::ctx(), M * N * 4, true), dinp = host(M * K);
    Buffer dw(test::ctx(), N * K * 4, true), db(test::ctx(), N * 4, true);
    for (int bits = 0; bits < 8; bits++) {
        bool has_bias = bits & 1, relu = bits & 2, add = bits & 4;
        INFO("bias " << has_bias << " relu " << relu << " residual / accumulate " << add);
        three_ways([&](Program& p) {
            ops::matmul_forward(test::kernels(), p, out, inp, w, bias, M, N, K, has_bias, relu, add ? BufferRange(res) : BufferRange{});
        }, {&out});
        test::run([&](Program& p) { ops::matmul_forward(test::kernels(), p, fwd, inp, w, bias, M, N, K, has_bias, relu); });
        std::vector<float> dinp0 = dinp.read<float>(M * K);
        three_ways([&](Program& p) {
            if (add) dinp.upload(dinp0.data(), M * K * 4);  // += the same values each way
            ops::matmul_backward(test::kernels(), p, dinp, dw, db, dout, inp, w, fwd, M, N, K, has_bias, relu, true, add);
        }, {&dw, &db});
        dinp.upload(dinp0.data(), M * K * 4);
    }
    // attention without dropout: the block kernels (T 8) and the row kernels (T 12)
    for (uint32_t T : {8u, 12u}) {
        const uint32_t B = 3, NH = 2, HS = 8, C = NH * HS;
        INFO("attention, T " << T);
        Buffer qkv = host(B * T * 3 * C), adout = host(B * T * C), seed = host(2);
        Buffer att(test::ctx(), B * NH * T * T * 4, true), aout(test::ctx(), B * T * C * 4, true);
        Buffer dqkv(test::ctx(), B * T * 3 * C * 4, true), dpre(test::ctx(), B * NH * T * T * 4, true);
        ops::AttnDropout drop;
        drop.seed = seed;
        three_ways([&](Program& p) {
            ops::attention_forward(test::kernels(), p, aout, att, qkv, B, T, NH, HS, true, drop);
            p.barrier("the backward reads att and out");
            ops::attention_backward(test::kernels(), p, dqkv, dpre, adout, qkv, att, aout, B, T, NH, HS, true, drop);
        }, {&att, &aout, &dqkv});
    }
    // layernorm's backward (dinp = or +=), dropout's forward with and without a residual, embeddings with and without
    // positions
    const uint32_t LN = 29, LC = 16;
    Buffer lx = host(LN * LC), lw = host(LC), lb = host(LC), ldout = host(LN * LC), lout(test::ctx(), LN * LC * 4, true);
    Buffer stats(test::ctx(), LN * 2 * 4, true), ldx = host(LN * LC), ldw(test::ctx(), LC * 4, true), ldb(test::ctx(), LC * 4, true);
    test::run([&](Program& p) { ops::layernorm_forward(test::kernels(), p, lout, stats, lx, lw, lb, LN, LC); });
    std::vector<float> ldx0 = ldx.read<float>(LN * LC);
    for (bool acc : {false, true}) {
        INFO("layernorm backward, accumulate " << acc);
        three_ways([&](Program& p) {
            ldx.upload(ldx0.data(), LN * LC * 4);
            ops::layernorm_backward(test::kernels(), p, ldx, ldw, ldb, ldout, lx, lw, stats, LN, LC, acc);
        }, {&ldx, &ldw, &ldb});
    }
    Buffer dseed(test::ctx(), 8, true);
    const uint32_t key[2] = {3u, 7u};
    dseed.upload(key, 8);
    for (bool with_res : {false, true}) {
        INFO("dropout forward, residual " << with_res);
        three_ways([&](Program& p) {
            ops::dropout_forward(test::kernels(), p, lout, lx, with_res ? BufferRange(ldout) : BufferRange{}, dseed,
                                 LN * LC, 5, 0.25f);
        }, {&lout});
    }
    const uint32_t EB = 3, ET = 5, EC = 16, EV = 11;
    std::vector<uint32_t> toks(64), offs = {0, 9, 30};
    for (size_t i = 0; i < toks.size(); i++) toks[i] = uint32_t(i * 7 % EV);
    auto gtoks = upload(toks), goffs = upload(offs);
    Buffer wte = host(EV * EC), wpe = host(ET * EC), eout(test::ctx(), EB * ET * EC * 4, true);
    for (bool pos : {false, true}) {
        INFO("embedding, positions " << pos);
        three_ways([&](Program& p) {
            ops::embedding_forward(test::kernels(), p, eout, gtoks, goffs, wte, wpe, EB, ET, EC, pos);
        }, {&eout});
    }
}

// A CPU driver (lavapipe) stops every loop of a shader invocation once 65535 iterations have run in all:
// Trainer::check_cpu_loops refuses shapes past the limits below, and these are the largest shapes of each kind,
// checked exactly (sums of ones) or against the reference. (Past them the driver's sums come out short: 70000
// rows of dw summed to 65532.)
TEST_CASE("the largest shapes Trainer allows on a CPU driver compute whole sums", "[ops][loops]") {
    const uint32_t M = Trainer::k_cpu_max_rows;
    auto ones = [](size_t n) { return upload(std::vector<float>(n, 1.0f)); };
    SECTION("sums over the rows: matmul's dw and dbias (in one row range), LayerNorm's dbias, the mean") {
        // N 8, K 64: 8 x 16 dw tiles; N 64, K 256: 8 x 32 (matmul_dw_tkw 8), the most work a row
        auto [N, K] = GENERATE(std::pair{8u, 64u}, std::pair{64u, 256u});
        INFO("N " << N << " K " << K);
        auto dout = ones(size_t(M) * N), inp = ones(size_t(M) * K), w = ones(size_t(N) * K);
        auto dinp = zeros(size_t(M) * K), dw = zeros(size_t(N) * K), db = zeros(N);
        uint32_t splits = 1;  // one range over all M rows: the longest loop (CPU devices split at 2048 rows)
        auto scratch = zeros(1);
        auto lstats = upload(std::vector<float>(2 * size_t(M), 1.0f)), ldinp = zeros(size_t(M) * K), ldw = zeros(K),
             ldb = zeros(K);
        uint32_t lsplits = ops::layernorm_backward_splits(test::ctx(), M, K);
        auto lscratch = zeros(std::max<size_t>(1, ops::layernorm_backward_scratch(K, lsplits)));
        Buffer result(test::ctx(), 16, true);
        test::run([&](Program& p) {
            ops::matmul_backward(test::kernels(), p, dinp, dw, db, dout, inp, w, dout, M, N, K, true, false, true, false,
                                 scratch, splits);
            ops::layernorm_backward(test::kernels(), p, ldinp, ldw, ldb, inp, inp, w, lstats, M, K, false, lscratch,
                                    lsplits);
            ops::mean_forward(test::kernels(), p, result, dout, M, 0);
        });
        for (float v : download(dw, size_t(N) * K)) REQUIRE(v == float(M));
        for (float v : download(db, N)) REQUIRE(v == float(M));
        for (float v : download(ldb, K)) REQUIRE(v == float(M));
        REQUIRE(result.read<float>(1)[0] == 1.0f);
    }
    SECTION("the token embedding's gradient: every row of the batch, every character of the vocabulary") {
        const uint32_t V = Trainer::k_cpu_max_vocab, C = 4, T = 8, B = M / T;
        std::vector<uint32_t> tokens(T + 1, V - 1), off(B, 0);
        auto gtok = upload(tokens), goff = upload(off), dout = ones(size_t(M) * C);
        auto dwte = upload(std::vector<float>(size_t(V) * C, 5.0f)), dwpe = zeros(size_t(T) * C);
        test::run([&](Program& p) { ops::embedding_backward(test::kernels(), p, dwte, dwpe, dout, gtok, goff, B, T, C, V, true); });
        auto g = download(dwte, size_t(V) * C);
        for (uint32_t c = 0; c < C; c++) REQUIRE(g[size_t(V - 1) * C + c] == float(M));
        REQUIRE(g[0] == 0.0f);  // the first row zeroed too
        for (float v : download(dwpe, size_t(T) * C)) REQUIRE(v == float(B));
    }
    SECTION("cross-entropy over the largest vocabulary: the evaluation's kernel and the training step's") {
        Rng r(9);
        const uint32_t V = Trainer::k_cpu_max_vocab, B = 2, T = 8, NT = 30;
        std::vector<uint32_t> tokens(NT), off(B);
        for (auto& t : tokens) t = uint32_t(r.below(V));
        for (auto& o : off) o = uint32_t(r.below(NT - T - 1));
        auto logits = test::randn(r, size_t(B) * T * V, 0.02);
        auto gl = upload(logits), gtok = upload(tokens), goff = upload(off);
        auto losses = zeros(B * T), losses2 = zeros(B * T), dlogits = zeros(size_t(B) * T * V),
             dlogits2 = zeros(size_t(B) * T * V);
        test::run([&](Program& p) {
            ops::crossentropy_forward(test::kernels(), p, losses, gl, gtok, goff, B, T, V);
            ops::crossentropy_backward(test::kernels(), p, dlogits2, gl, gtok, goff, B, T, V);
            ops::crossentropy_fused(test::kernels(), p, losses2, dlogits, gl, gtok, goff, B, T, V);
        });
        std::vector<double> rl, rd;
        ref::crossentropy_forward(rl, logits, tokens, off, B, T, V);
        ref::crossentropy_backward(rd, logits, tokens, off, B, T, V);
        test::require_close(download(losses, B * T), rl, 1e-4, 1e-5, "losses");
        test::require_close(download(losses2, B * T), rl, 1e-4, 1e-5, "fused losses");
        test::require_close(download(dlogits, size_t(B) * T * V), rd, 1e-9, 1e-4, "fused dlogits");
        test::require_close(download(dlogits2, size_t(B) * T * V), rd, 1e-9, 1e-4, "dlogits");
    }
    SECTION("attention: the largest block with the vec4 kernels' largest head; the scalar kernels at their limit") {
        Rng r(3);
        Buffer key(test::ctx(), 8, true);
        const uint32_t k[2] = {12345u, 7u};
        key.upload(k, 8);
        // the encoder (no mask: every row runs over all T keys) with and without dropout
        for (auto [T, HS] : {std::pair{1024, 128}, std::pair{64, 256}, std::pair{546, 30}}) {
            INFO("T " << T << " HS " << HS);
            if (!ops::attention_vec4(HS)) REQUIRE(uint64_t(T) * HS <= Trainer::k_cpu_max_block_x_head);
            for (float drop : {0.0f, 0.2f}) check_attention(r, key, k, 1, T, 1, HS, false, drop, false);
        }
    }
}

TEST_CASE("the kernel policy reads its ATTNLAB_ overrides, the ops follow it, bad values are refused", "[ops]") {
    const VkPhysicalDeviceProperties& props = test::ctx().props();
    test::EnvGuard at("ATTNLAB_ATTENTION"), rows("ATTNLAB_ATTENTION_ROWS"), a4("ATTNLAB_ATTENTION_ATT4"),
        mm("ATTNLAB_MATMUL"), ln("ATTNLAB_LAYERNORM_ROWS"), rs("ATTNLAB_ROW_SPLITS"), fl("ATTNLAB_KERNEL_FLAGS"),
        nt("ATTNLAB_NARROW_TAIL");
    for (test::EnvGuard* g : {&at, &rows, &a4, &mm, &ln, &rs, &fl, &nt}) g->clear();
    KernelPolicy d = KernelPolicy::for_device(props);  // the device's own choices
    CHECK(d.cpu_device == (props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU));
    CHECK(d.attention == AttentionChoice::automatic);
    CHECK(d.matmul == MatmulChoice::automatic);
    CHECK(d.attention_rows == 0);
    CHECK(d.row_splits == 0);
    CHECK(d.attention_att4);
    CHECK(d.layernorm_rows_in_registers);
    CHECK_FALSE(d.all_kernel_flags);
    CHECK(d.narrow_tail);

    at.set("block"), rows.set("2"), a4.set("0"), mm.set("tiled"), ln.set("memory"), rs.set("3"), fl.set("all"),
        nt.set("0");
    KernelPolicy p = KernelPolicy::for_device(props);
    CHECK(p.attention == AttentionChoice::block);
    CHECK(p.attention_rows == 2);
    CHECK_FALSE(p.attention_att4);
    CHECK(p.matmul == MatmulChoice::tiled);
    CHECK_FALSE(p.layernorm_rows_in_registers);
    CHECK(p.row_splits == 3);
    CHECK(p.all_kernel_flags);
    CHECK_FALSE(p.narrow_tail);
    {
        test::PolicyGuard pol;
        test::ctx().edit_policy() = p;  // what the ops then record
        CHECK(ops::attention_block(test::ctx(), 8, 32));
        CHECK(ops::attention_backward_rows(test::ctx()) == 2);
        CHECK(ops::matmul_kernel(test::ctx(), 64) == ops::MatmulKernel::tiled);
        CHECK(ops::layernorm_c4r(test::ctx(), 64) == 1);
        CHECK(ops::row_splits(test::ctx(), 100, 10) == 3);
        CHECK(ops::row_splits(test::ctx(), 2, 10) == 2);  // never more ranges than rows
        pol->attention = AttentionChoice::rows;
        CHECK_FALSE(ops::attention_block(test::ctx(), 8, 32));
    }
    CHECK(test::ctx().policy().attention == d.attention);  // the guard put the device's choices back

    for (test::EnvGuard* g : {&at, &rows, &a4, &mm, &ln, &rs, &fl, &nt}) g->clear();
    auto refused = [&](test::EnvGuard& g, const char* value) {
        g.set(value);
        std::string e = test::error_of([&] { KernelPolicy::for_device(props); });
        g.clear();
        return e;
    };
    using Catch::Matchers::Contains;
    CHECK_THAT(refused(at, "bogus"), Contains("ATTNLAB_ATTENTION='bogus' is not an attention kernel: use rows, block or smem"));
    CHECK_THAT(refused(rows, "9"), Contains("ATTNLAB_ATTENTION_ROWS='9' is not 1 to 8"));
    CHECK_THAT(refused(rows, "4x"), Contains("is not 1 to 8"));
    CHECK_THAT(refused(mm, "fast"), Contains("use tiled or smem"));
    CHECK_THAT(refused(ln, "disk"), Contains("memory or registers"));
    CHECK_THAT(refused(rs, "0"), Contains("ATTNLAB_ROW_SPLITS='0'"));
    CHECK_THAT(refused(fl, "some"), Contains("all or needed"));
    CHECK_THAT(refused(nt, "yes"), Contains("0 or 1"));
    if (!d.smem_fits) {  // lavapipe: the shared-memory kernels cannot be forced, and the message says why
        CHECK_THAT(refused(mm, "smem"), Contains("ATTNLAB_MATMUL=smem: this device allows"));
        CHECK_THAT(refused(at, "smem"), Contains("unset ATTNLAB_ATTENTION"));
    }
}
