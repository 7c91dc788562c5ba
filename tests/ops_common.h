// Shared by the op tests (test_<op>.cpp): includes, finite differences, a dot product, the attention check.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "gpu.h"
#include "ops/adamw.h"
#include "ops/attention.h"
#include "ops/crossentropy.h"
#include "ops/dropout.h"
#include "ops/embedding.h"
#include "ops/gelu.h"
#include "ops/layernorm.h"
#include "ops/matmul.h"
#include "reference/ops_ref.h"
#include "train/trainer.h"

using namespace attn;
using test::download;
using test::upload;
using test::zeros;

inline std::vector<double> fd_grad(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x,
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
inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); i++) s += a[i] * b[i];
    return s;
}

// Attention forward and backward on the GPU (B, T, NH, HS; dropout `prob` at site 4 with `key` = k), checked
// against the CPU reference: out, att and dqkv. stale: att and dpre start random (every element must be written).
struct AttentionRun {
    std::vector<double> qkv, dout, att, ref_dqkv;
    ref::Drop rd;
};
inline AttentionRun check_attention(Rng& r, const Buffer& key, const uint32_t k[2], int B, int T, int NH, int HS,
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
