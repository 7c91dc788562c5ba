// Lab demos 1-4, the mathematical trick and the scaling of attention: matmul, average, softmax, scaling.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "lab/lab_gpu.h"

namespace attn::lab {

// --- 1. matmul: c = a @ b with a = ones, tril(ones) or the row-normalised tril ---
constexpr int k_matmul_max = 64;  // rows and columns of b at most (the demo shows every matrix)
struct MatmulDemoInput {
    TrilMode a_mode = TrilMode::Ones;                 // Ones, Tril or TrilAverage
    Matrix b{3, 2, {2, 7, 6, 4, 6, 5}};               // (K, N), the lecture's b (torch.manual_seed(42)); a is (K, K)
};
struct MatmulDemo {
    Matrix a;  // (K, K)
    Matrix b;  // (K, N)
    Matrix c;  // (K, N) = a @ b
};
MatmulDemo run_matmul_demo(Context& ctx, KernelCache& kc, const MatmulDemoInput& in);

// --- 2. average: three ways to average the past ---
struct AverageDemoInput {
    int B = 4, T = 8, C = 2;  // the lecture's x: torch.manual_seed(1337); torch.randn(B, T, C) (torch_generator.h)
    uint64_t seed = 1337;
    int show_b = 0;           // which batch element to show
};
struct AverageDemo {
    Matrix x;             // (T, C)  x[show_b]
    Matrix wei;           // (T, T)  softmax(masked_fill(zeros, tril == 0, -inf))
    Matrix xbow_loop;     // (T, C)  version 1: loops over the past
    Matrix xbow_matmul;   // (T, C)  version 2: tril(ones)/rowsum @ x
    Matrix xbow_softmax;  // (T, C)  version 3: masked_fill + softmax, then @ x
    float max_diff = 0;   // largest |difference| between any two versions, over all of (B, T, C)
    bool torch_x = false; // x is PyTorch's torch.randn after torch.manual_seed(seed) (B*T*C >= 16), else the app's Rng
    std::string x_origin; // for a header: "torch.manual_seed(1337); x = torch.randn(4, 8, 2): PyTorch's own numbers"
    // Version 4, self-attention: the lecture's next cell, whatever the inputs above. torch.manual_seed(1337);
    // x = torch.randn(4, 8, 32); key, query, value = nn.Linear(32, 16, bias=False); wei = softmax(masked_fill(
    // q @ k^T, tril == 0, -inf)) (not yet scaled: the lecture adds * head_size**-0.5 after it); out = wei @ v.
    Matrix head_wei;      // (8, 8)   wei[0], the numbers the lecture prints
    Matrix head_out;      // (8, 16)  out[0]
};
constexpr int k_head_B = 4, k_head_T = 8, k_head_C = 32, k_head_HS = 16;  // version 4's shapes, the lecture's
static_assert(k_head_B * k_head_T * k_head_HS >= 16, "TorchGenerator::randn reproduces PyTorch from 16 numbers on");
AverageDemo run_average_demo(Context& ctx, KernelCache& kc, const AverageDemoInput& in);

// --- 3. softmax: sharpening with a multiplier ---
struct SoftmaxDemoInput {
    std::vector<float> scores{0.1f, -0.2f, 0.3f, -0.2f, 0.5f};  // the lecture's scores
    std::vector<float> multipliers{1.0f, 8.0f};                 // one softmax per multiplier (the slider: 1..16)
};
struct SoftmaxDemo {
    std::vector<float> scores;
    std::vector<float> multipliers;
    std::vector<std::vector<float>> probs;  // (multipliers, scores) softmax(mult * scores)
};
SoftmaxDemo run_softmax_demo(Context& ctx, KernelCache& kc, const SoftmaxDemoInput& in);

// --- 4. scaling: var(q . k^T) with and without 1/sqrt(head_size) ---
struct ScalingDemoInput {
    int head_size = 16;  // HS, the slider: 1..256
    int B = 100, T = 10; // q, k (B, T, HS): B*T*T = 10,000 scores
    uint64_t seed = 1337;
    int bins = 21;       // histogram bins
};
struct ScalingDemo {
    int head_size = 0;
    size_t samples = 0;             // scores in each variance: B*T*T
    double var_q = 0, var_k = 0;    // unbiased, over every element of q and of k
    double var_unscaled = 0;        // var(q @ k^T), about head_size
    double var_scaled = 0;          // var(q @ k^T * head_size^-0.5), about 1
    float hist_lo = 0, hist_hi = 0; // common range of both histograms (values outside go to the end bins)
    std::vector<int> hist_unscaled, hist_scaled;  // (bins,) counts
    std::vector<float> row_unscaled, row_scaled;  // (T,) softmax of row 0 of batch 0, without and with scaling
    // The lecture's own cell, whatever the inputs above: its generator goes on from version 4 of lab average (no new
    // seed), k = torch.randn(4, 8, 16); q = torch.randn(4, 8, 16); wei = q @ k^T * 16**-0.5. It prints k.var()
    // 1.0449, q.var() 1.0700, wei.var() 1.0918.
    struct LectureCell {
        double var_k = 0, var_q = 0, var_scaled = 0, var_unscaled = 0;
    } lecture;
};
ScalingDemo run_scaling_demo(Context& ctx, KernelCache& kc, const ScalingDemoInput& in);

}  // namespace attn::lab
