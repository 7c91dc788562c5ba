// PyTorch's CPU random numbers, reproduced: after torch.manual_seed(seed), torch.randn(n) and nn.Linear's weights in
// float32, so the Lab shows the lecture's own tensors (its x = torch.randn(4, 8, 2) after torch.manual_seed(1337),
// its head's key/query/value) and not merely tensors like them. Checked against PyTorch 1.13 (tests/test_lab.cpp).
// - The generator is the standard mt19937 (at::mt19937: the same initialisation from the seed's low 32 bits).
// - A float uniform in [from, to) is the 32-bit output's low 24 bits times 2^-24, times (to - from), plus from
//   (at::uniform_real_distribution<float>); uniform_() draws one per element in order.
// - randn of n >= 16 floats (ATen's normal_fill, cpu/DistributionTemplates.h): all n uniforms first, then every block
//   of 16 turned into normals by Box-Muller (u1 = 1 - d[j], u2 = d[j + 8]: cos into j, sin into j + 8); when n is not
//   a multiple of 16 the last 16 are drawn afresh and transformed again. Equal to float rounding (PyTorch's AVX2
//   build uses vectorised log and cos, a few ulp apart). Under 16 PyTorch takes another path (double normals with a
//   cached second sample): not reproduced, nullopt.
// - nn.Linear(in, out, bias=False) draws its (out, in) weight with kaiming_uniform_(a=sqrt(5)): uniform in
//   +-1/sqrt(in).
#pragma once
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace attn::lab {

class TorchGenerator {
public:
    explicit TorchGenerator(uint64_t seed) : m_gen(uint32_t(seed)) {}  // torch keeps the seed's low 32 bits

    std::optional<std::vector<float>> randn(size_t n) {
        if (n < 16) return std::nullopt;
        std::vector<float> x(n);
        for (auto& v : x) v = uniform01();
        for (size_t i = 0; i + 16 <= n; i += 16) normal16(&x[i]);
        if (n % 16 != 0) {
            float* tail = &x[n - 16];
            for (int i = 0; i < 16; i++) tail[i] = uniform01();
            normal16(tail);
        }
        return x;
    }
    std::vector<float> uniform(size_t n, float from, float to) {
        std::vector<float> x(n);
        for (auto& v : x) v = uniform01() * (to - from) + from;
        return x;
    }
    // nn.Linear(in, out, bias=False).weight: (out, in)
    std::vector<float> linear_weight(int in, int out) {
        float bound = 1.0f / std::sqrt(float(in));  // kaiming_uniform_(a=sqrt(5)): gain sqrt(1/3) * sqrt(3 / in)
        return uniform(size_t(out) * in, -bound, bound);
    }

private:
    float uniform01() { return float(m_gen() & ((1u << 24) - 1)) * 0x1.0p-24f; }
    static void normal16(float* d) {
        for (int j = 0; j < 8; j++) {
            float u1 = 1 - d[j], u2 = d[j + 8];  // [0, 1) -> (0, 1] for the log
            float radius = std::sqrt(-2 * std::log(u1));
            float theta = float(2.0f * 3.14159265358979323846 * u2);
            d[j] = radius * std::cos(theta);
            d[j + 8] = radius * std::sin(theta);
        }
    }
    std::mt19937 m_gen;
};

// torch.manual_seed(seed); torch.randn(n)
inline std::optional<std::vector<float>> torch_randn(uint64_t seed, size_t n) { return TorchGenerator(seed).randn(n); }

}  // namespace attn::lab
