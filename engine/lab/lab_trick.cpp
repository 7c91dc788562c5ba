// Lab demos 1-4, the mathematical trick and the scaling of attention: matmul, average, softmax, scaling.
#include "lab/lab_trick.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "lab/torch_generator.h"
#include "rng.h"
#include "vk/check.h"

namespace attn::lab {

namespace {

double variance(const std::vector<float>& v) {  // unbiased, like torch.var
    if (v.size() < 2) return 0.0;
    double mean = 0;
    for (float x : v) mean += x;
    mean /= double(v.size());
    double s = 0;
    for (float x : v) s += (x - mean) * (x - mean);
    return s / double(v.size() - 1);
}

std::vector<int> histogram(const std::vector<float>& v, float lo, float hi, int bins) {
    std::vector<int> h(bins, 0);
    for (float x : v) {
        int i = int(std::floor((x - lo) / (hi - lo) * float(bins)));
        h[std::clamp(i, 0, bins - 1)]++;
    }
    return h;
}

Matrix slice(const std::vector<float>& all, int index, int rows, int cols) {
    size_t n = size_t(rows) * cols;
    return Matrix(rows, cols, std::vector<float>(all.begin() + index * n, all.begin() + (index + 1) * n));
}

std::string fmt_float(float x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", double(x));
    return buf;
}

}  // namespace

MatmulDemo run_matmul_demo(Context& ctx, KernelCache& kc, const MatmulDemoInput& in) {
    const Matrix& b = in.b;
    if (b.rows < 1 || b.cols < 1 || b.v.size() != size_t(b.rows) * b.cols)
        throw Error("lab matmul: b must be a non-empty matrix with rows*cols values, e.g. --b \"2,7;6,4;6,5\"");
    if (in.a_mode == TrilMode::Zeros) throw Error("lab matmul: a must be ones, tril or average");
    if (b.rows > k_matmul_max || b.cols > k_matmul_max)  // every matrix is printed: beyond this it is a wall of digits
        throw Error("lab matmul: b may have at most " + std::to_string(k_matmul_max) + " rows and columns (it has " +
                    std::to_string(b.rows) + " x " + std::to_string(b.cols) + "), e.g. --b \"2,7;6,4;6,5\"");
    const uint32_t K = uint32_t(b.rows), N = uint32_t(b.cols);
    Buffer ga = gpu_zeros(ctx, size_t(K) * K);  // (K, K)
    Buffer gb = to_gpu(ctx, b.v);               // (K, N)
    Buffer gc = gpu_zeros(ctx, size_t(K) * N);  // (K, N)
    run_program(ctx, [&](Program& pr) {
        tril(kc, pr, ga, K, in.a_mode);
        pr.barrier("the matmul reads the a that lab_tril wrote");
        matmul(kc, pr, gc, ga, gb, 1, K, N, K, 0, 0, false);
    });
    MatmulDemo d;
    d.a = Matrix(int(K), int(K), ga.read<float>(size_t(K) * K));
    d.b = b;
    d.c = Matrix(int(K), int(N), gc.read<float>(size_t(K) * N));
    return d;
}

// Version 4 of the average: one head of self-attention, the lecture's cell with its own numbers (torch_generator.h).
// The lecture's cell's tensors in the order it draws them: torch.manual_seed(1337); x = torch.randn(4, 8, 32);
// key, query, value = nn.Linear(32, 16, bias=False). Returns the generator, for the cells after it.
static TorchGenerator lecture_head_tensors(std::vector<float>& x, std::vector<float>& wk, std::vector<float>& wq,
                                           std::vector<float>& wv) {
    TorchGenerator gen(1337);
    x = *gen.randn(size_t(k_head_B) * k_head_T * k_head_C);  // (B, T, C)
    wk = gen.linear_weight(k_head_C, k_head_HS);              // (HS, C) each
    wq = gen.linear_weight(k_head_C, k_head_HS);
    wv = gen.linear_weight(k_head_C, k_head_HS);
    return gen;
}

static void self_attention_cell(Context& ctx, KernelCache& kc, AverageDemo& d) {
    const uint32_t B = k_head_B, T = k_head_T, C = k_head_C, HS = k_head_HS;
    std::vector<float> x, wk, wq, wv;
    lecture_head_tensors(x, wk, wq, wv);
    Buffer gx = to_gpu(ctx, x);                                                  // (B, T, C)
    Buffer gk = to_gpu(ctx, wk), gq = to_gpu(ctx, wq), gv = to_gpu(ctx, wv);     // (HS, C) each
    Buffer k = gpu_zeros(ctx, size_t(B) * T * HS), q = gpu_zeros(ctx, size_t(B) * T * HS);  // (B, T, HS) each
    Buffer v = gpu_zeros(ctx, size_t(B) * T * HS);
    Buffer scores = gpu_zeros(ctx, size_t(B) * T * T), wei = gpu_zeros(ctx, size_t(B) * T * T);  // (B, T, T)
    Buffer out = gpu_zeros(ctx, size_t(B) * T * HS);                                              // (B, T, HS)
    run_program(ctx, [&](Program& pr) {
        matmul(kc, pr, k, gx, gk, 1, B * T, HS, C, 0, 0, true);  // k = key(x) = x @ Wk^T  (B*T, HS)
        matmul(kc, pr, q, gx, gq, 1, B * T, HS, C, 0, 0, true);  // q = query(x)
        matmul(kc, pr, v, gx, gv, 1, B * T, HS, C, 0, 0, true);  // v = value(x)
        pr.barrier("the scores read q and k, out reads v");
        matmul(kc, pr, scores, q, k, B, T, T, HS, T * HS, T * HS, true);  // q @ k^T per batch element  (B, T, T)
        pr.barrier("the softmax reads the scores");
        softmax(kc, pr, wei, scores, B * T, T, true, 1.0f);  // masked_fill(tril == 0, -inf), softmax(dim=-1)
        pr.barrier("out reads the weights");
        matmul(kc, pr, out, wei, v, B, T, HS, T, T * T, T * HS, false);  // wei @ v  (B, T, HS)
    });
    d.head_wei = Matrix(T, T, wei.read<float>(size_t(T) * T));
    d.head_out = Matrix(T, HS, out.read<float>(size_t(T) * HS));
}

static std::string average_x_origin(const AverageDemoInput& in, const AverageDemo& d) {
    std::string shape = std::to_string(in.B) + ", " + std::to_string(in.T) + ", " + std::to_string(in.C);
    if (d.torch_x)
        return "torch.manual_seed(" + std::to_string(in.seed) + "); x = torch.randn(" + shape + "): PyTorch's own numbers" +
               (in.seed > UINT32_MAX ? " (its generator keeps the seed's low 32 bits)" : "");
    return "x = randn(" + shape + ") from the app's generator, seed " + std::to_string(in.seed) +
           " (under 16 numbers: PyTorch draws those another way, not reproduced)";
}

AverageDemo run_average_demo(Context& ctx, KernelCache& kc, const AverageDemoInput& in) {
    if (in.B < 1 || in.T < 1 || in.C < 1 || in.T > 1024 || int64_t(in.B) * in.T * in.C > (1 << 22))
        throw Error("lab average: B, T and C must be positive, T at most 1024 and B*T*C at most 4M, e.g. --shape 4,8,2");
    if (in.show_b < 0 || in.show_b >= in.B) throw Error("lab average: the shown batch element must be in 0.." + std::to_string(in.B - 1) + " (B is " +
                    std::to_string(in.B) + ")");
    const uint32_t B = in.B, T = in.T, C = in.C;
    const size_t n = size_t(B) * T * C;
    std::optional<std::vector<float>> tx = torch_randn(in.seed, n);
    std::vector<float> x(n);  // (B, T, C)
    if (tx) {
        x = std::move(*tx);
    } else {
        Rng rng(in.seed);
        for (auto& v : x) v = float(rng.normal());
    }
    Buffer gx = to_gpu(ctx, x);
    Buffer loop = gpu_zeros(ctx, n), mm = gpu_zeros(ctx, n), sm = gpu_zeros(ctx, n);  // (B, T, C) each
    Buffer avg = gpu_zeros(ctx, size_t(T) * T), zeros = gpu_zeros(ctx, size_t(T) * T), wei = gpu_zeros(ctx, size_t(T) * T);
    run_program(ctx, [&](Program& pr) {
        xbow(kc, pr, loop, gx, B, T, C);                     // version 1
        tril(kc, pr, avg, T, TrilMode::TrilAverage);         // version 2: wei = tril / wei.sum(1)
        tril(kc, pr, zeros, T, TrilMode::Zeros);             // version 3: wei = zeros((T, T))
        pr.barrier("the matmul and the softmax read the weights lab_tril wrote");
        matmul(kc, pr, mm, avg, gx, B, T, C, T, 0, T * C, false);
        softmax(kc, pr, wei, zeros, T, T, true, 1.0f);       // masked_fill(tril == 0, -inf), softmax(dim=-1)
        pr.barrier("the last matmul reads the softmax weights");
        matmul(kc, pr, sm, wei, gx, B, T, C, T, 0, T * C, false);
    });
    std::vector<float> r1 = loop.read<float>(n), r2 = mm.read<float>(n), r3 = sm.read<float>(n);
    AverageDemo d;
    d.torch_x = tx.has_value();
    d.x_origin = average_x_origin(in, d);
    for (size_t i = 0; i < n; i++)
        d.max_diff = std::max({d.max_diff, std::abs(r1[i] - r2[i]), std::abs(r1[i] - r3[i]), std::abs(r2[i] - r3[i])});
    d.x = slice(x, in.show_b, T, C);
    d.wei = Matrix(T, T, wei.read<float>(size_t(T) * T));
    self_attention_cell(ctx, kc, d);
    d.xbow_loop = slice(r1, in.show_b, T, C);
    d.xbow_matmul = slice(r2, in.show_b, T, C);
    d.xbow_softmax = slice(r3, in.show_b, T, C);
    return d;
}

SoftmaxDemo run_softmax_demo(Context& ctx, KernelCache& kc, const SoftmaxDemoInput& in) {
    if (in.scores.empty()) throw Error("lab softmax: give at least one score, e.g. --scores 0.1,-0.2,0.3,-0.2,0.5");
    for (float m : in.multipliers) {
        if (!(m > 0.0f && m <= 1024.0f)) throw Error("lab softmax: each multiplier must be in (0, 1024], e.g. --mult 8");
        for (float x : in.scores)  // the shader's max would be infinite and exp(inf - inf) NaN
            if (!std::isfinite(x * m))
                throw Error("lab softmax: score " + fmt_float(x) + " x multiplier " + fmt_float(m) +
                            " is beyond a float (about 3.4e38): use smaller scores");
    }
    const uint32_t n = uint32_t(in.scores.size());
    Buffer gs = to_gpu(ctx, in.scores);  // (n,)
    std::vector<Buffer> outs;            // (multipliers,) of (n,)
    for (size_t i = 0; i < in.multipliers.size(); i++) outs.push_back(gpu_zeros(ctx, n));
    run_program(ctx, [&](Program& pr) {
        for (size_t i = 0; i < outs.size(); i++) softmax(kc, pr, outs[i], gs, 1, n, false, in.multipliers[i]);
    });
    SoftmaxDemo d;
    d.scores = in.scores;
    d.multipliers = in.multipliers;
    for (auto& o : outs) d.probs.push_back(o.read<float>(n));
    return d;
}

// The lecture's scaling cell, its generator going on from the head's cell (lecture_head_tensors).
static void lecture_scaling_cell(Context& ctx, KernelCache& kc, ScalingDemo& d) {
    const uint32_t B = k_head_B, T = k_head_T, HS = k_head_HS;
    std::vector<float> x, wk, wq, wv;
    TorchGenerator gen = lecture_head_tensors(x, wk, wq, wv);
    std::vector<float> k = *gen.randn(size_t(B) * T * HS), q = *gen.randn(size_t(B) * T * HS);  // (B, T, HS) each
    Buffer gk = to_gpu(ctx, k), gq = to_gpu(ctx, q);                                          // (B, T, HS) each
    Buffer wu = gpu_zeros(ctx, size_t(B) * T * T), ws = gpu_zeros(ctx, size_t(B) * T * T);  // (B, T, T) each
    run_program(ctx, [&](Program& pr) {
        matmul(kc, pr, wu, gq, gk, B, T, T, HS, T * HS, T * HS, true, 1.0f);                       // q @ k^T
        matmul(kc, pr, ws, gq, gk, B, T, T, HS, T * HS, T * HS, true, 1.0f / std::sqrt(float(HS)));  // * HS^-0.5
    });
    d.lecture.var_k = variance(k);
    d.lecture.var_q = variance(q);
    d.lecture.var_unscaled = variance(wu.read<float>(size_t(B) * T * T));
    d.lecture.var_scaled = variance(ws.read<float>(size_t(B) * T * T));
}

ScalingDemo run_scaling_demo(Context& ctx, KernelCache& kc, const ScalingDemoInput& in) {
    if (in.head_size < 1 || in.head_size > 256) throw Error("lab scaling: head size must be 1..256, e.g. --head-size 16");
    if (in.B < 1 || in.T < 1 || in.T > 1024 || size_t(in.B) * in.T * in.head_size > (size_t(1) << 24) ||
        size_t(in.B) * in.T * in.head_size < 16 || size_t(in.B) * in.T * in.T > (size_t(1) << 24))
        throw Error("lab scaling: B and T must be positive, T at most 1024, B*T*head_size 16 to 16M and B*T*T at most 16M");
    if (in.bins < 1 || in.bins > 1000) throw Error("lab scaling: bins must be 1..1000");
    const uint32_t B = in.B, T = in.T, HS = in.head_size;
    const size_t nqk = size_t(B) * T * HS, nw = size_t(B) * T * T;
    // (B, T, HS) each, N(0, 1): torch.manual_seed(seed); q = torch.randn(B, T, HS); k = torch.randn(B, T, HS)
    TorchGenerator gen(in.seed);
    std::vector<float> q = *gen.randn(nqk), k = *gen.randn(nqk);  // nqk >= 16, checked above
    Buffer gq = to_gpu(ctx, q), gk = to_gpu(ctx, k);
    Buffer wu = gpu_zeros(ctx, nw), ws = gpu_zeros(ctx, nw);  // (B, T, T) scores
    Buffer pu = gpu_zeros(ctx, nw), ps = gpu_zeros(ctx, nw);  // (B, T, T) softmax of the scores
    const float scale = 1.0f / std::sqrt(float(HS));
    run_program(ctx, [&](Program& pr) {
        matmul(kc, pr, wu, gq, gk, B, T, T, HS, T * HS, T * HS, true, 1.0f);   // q @ k^T
        matmul(kc, pr, ws, gq, gk, B, T, T, HS, T * HS, T * HS, true, scale);  // q @ k^T * HS^-0.5
        pr.barrier("the softmax reads the scores");
        softmax(kc, pr, pu, wu, B * T, T, false, 1.0f);
        softmax(kc, pr, ps, ws, B * T, T, false, 1.0f);
    });
    ScalingDemo d;
    d.head_size = in.head_size;
    d.samples = nw;
    std::vector<float> su = wu.read<float>(nw), ss = ws.read<float>(nw);
    d.var_q = variance(q);
    d.var_k = variance(k);
    d.var_unscaled = variance(su);
    d.var_scaled = variance(ss);
    d.hist_hi = 4.0f * std::max(1.0f, std::sqrt(float(HS)));  // four unscaled standard deviations
    d.hist_lo = -d.hist_hi;
    d.hist_unscaled = histogram(su, d.hist_lo, d.hist_hi, in.bins);
    d.hist_scaled = histogram(ss, d.hist_lo, d.hist_hi, in.bins);
    d.row_unscaled = pu.read<float>(T);
    d.row_scaled = ps.read<float>(T);
    lecture_scaling_cell(ctx, kc, d);
    return d;
}

}  // namespace attn::lab
