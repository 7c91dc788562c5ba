// torch.randn on the CPU, reproduced: torch.manual_seed(seed); torch.randn(n) in float32, so the Lab can show the
// lecture's own tensors (its x = torch.randn(4, 8, 2) after torch.manual_seed(1337)) and not merely tensors like them.
// PyTorch's CPU generator is the standard mt19937; a float uniform is its 32-bit output's low 24 bits times 2^-24.
// For n >= 16 (ATen's normal_fill, cpu/DistributionTemplates.h) all n uniforms are drawn first, then every block of
// 16 turned into normals by Box-Muller (u1 = 1 - data[j], u2 = data[j + 8]: cos into j, sin into j + 8); when n is
// not a multiple of 16 the last 16 are drawn afresh and transformed again. Checked against PyTorch 1.13 (tests/
// test_lab.cpp): equal to float rounding (PyTorch's AVX2 build uses vectorised log/cos, a few ulp apart).
// For n < 16 PyTorch takes another path (double normals with a cached second sample); not reproduced: nullopt.
#pragma once
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace attn::lab {

inline std::optional<std::vector<float>> torch_randn(uint32_t seed, size_t n) {
    if (n < 16) return std::nullopt;
    std::mt19937 gen(seed);  // at::mt19937: the same initialisation and tempering
    auto uniform = [&] { return float(double(gen() & ((1u << 24) - 1)) * 0x1.0p-24); };
    auto fill16 = [](float* d) {
        for (int j = 0; j < 8; j++) {
            float u1 = 1 - d[j], u2 = d[j + 8];  // [0, 1) -> (0, 1] for the log
            float radius = std::sqrt(-2 * std::log(u1));
            float theta = float(2.0f * 3.14159265358979323846 * u2);
            d[j] = radius * std::cos(theta);
            d[j + 8] = radius * std::sin(theta);
        }
    };
    std::vector<float> x(n);
    for (auto& v : x) v = uniform();
    for (size_t i = 0; i + 16 <= n; i += 16) fill16(&x[i]);
    if (n % 16 != 0) {
        float* tail = &x[n - 16];
        for (int i = 0; i < 16; i++) tail[i] = uniform();
        fill16(tail);
    }
    return x;
}

}  // namespace attn::lab
