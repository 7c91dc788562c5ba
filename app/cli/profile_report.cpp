// ProfileReport: --profile's totals and their table.
#include "profile_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace attn {

void ProfileReport::add_step(const Trainer& tr, const StepResult& r, double seconds) {
    m_train_s += seconds;
    m_steps++;
    if (!r.profiled) return;
    for (auto& [name, ms] : tr.last_kernel_times()) {
        m_per_kernel[name].first += ms;
        m_per_kernel[name].second++;
    }
    m_profiled++;
    m_gpu_ms += r.gpu_ms;
}

void ProfileReport::print(double wall_s, size_t gpu_bytes, const TimeLapse& tl, double record_s) const {
    double wall_ms = 1e3 * m_train_s / m_steps, gpu_ms = m_gpu_ms / m_profiled;
    std::printf("--- time per training step (mean of %d steps) ---\n", m_steps);
    std::printf("wall %.3f ms | GPU %.3f ms | host %.3f ms (recording, submission, waiting, reading the loss)\n", wall_ms,
                gpu_ms, std::max(0.0, wall_ms - gpu_ms));
    std::printf("--- share of the run's %.2f s wall time ---\n", wall_s);
    std::printf("%-12s %6.1f%%\n%-12s %6.1f%%\n%-12s %6.1f%%\n", "training", 100 * m_train_s / wall_s, "evaluation",
                100 * m_eval_s / wall_s, "sampling", 100 * m_sample_s / wall_s);
    std::printf("GPU memory in use: %.1f MiB\n", gpu_bytes / 1048576.0);
    std::printf("attention time-lapse: %zu snapshots of a %d-character probe, %.2f MiB of host memory (budget %.0f MiB, "
                "%d thinned out), recorded in %.3f s (%.2f%% of the wall time)\n", tl.snapshots().size(), tl.length(),
                tl.bytes() / 1048576.0, tl.budget() / 1048576.0, tl.thinned(), record_s, 100 * record_s / wall_s);
    double total = 0;
    for (auto& [name, v] : m_per_kernel) total += v.first;
    std::vector<std::pair<std::string, std::pair<double, int>>> rows(m_per_kernel.begin(), m_per_kernel.end());
    std::sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.second.first > b.second.first; });
    std::printf("--- GPU time per step by kernel (mean of %d profiled steps) ---\n", m_profiled);
    std::printf("%-26s %10s %8s %7s\n", "kernel", "ms/step", "calls", "share");
    for (auto& [name, v] : rows)
        // calls a step, rounded: with replicas AdamW runs from the second step on (299 calls in 300 steps is 1 a step)
        std::printf("%-26s %10.3f %8ld %6.1f%%\n", name.c_str(), v.first / m_profiled,
                    std::lround(double(v.second) / m_profiled), 100.0 * v.first / total);
    std::printf("%-26s %10.3f\n", "total", total / m_profiled);
}

}  // namespace attn
