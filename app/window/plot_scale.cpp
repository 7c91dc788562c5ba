// The loss plot's axes (plot_scale.h).
#include "plot_scale.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn {

AxisRange loss_y_range(const std::vector<float>& step_losses, const std::vector<double>& estimates,
                       const std::vector<double>& refs, bool log_y) {
    double lo = INFINITY, hi = -INFINITY;
    auto take = [&](double v) {
        if (!std::isfinite(v) || (log_y && v <= 0)) return;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    };
    for (double v : estimates) take(v);
    double est_hi = hi;  // -inf: no estimate yet
    for (double v : refs) take(v);
    std::vector<float> finite;
    finite.reserve(step_losses.size());
    for (float v : step_losses)
        if (std::isfinite(v) && (!log_y || v > 0)) finite.push_back(v);
    if (!finite.empty()) {
        lo = std::min(lo, double(*std::min_element(finite.begin(), finite.end())));
        size_t k = std::min(finite.size() - 1, size_t(std::floor(0.995 * double(finite.size() - 1) + 0.5)));
        std::nth_element(finite.begin(), finite.begin() + long(k), finite.end());
        double step_hi = finite[k];
        // averaged over eval iters, the estimates say where the run is; single steps may reach a little above them
        if (std::isfinite(est_hi)) step_hi = std::min(step_hi, 1.9 * est_hi);
        hi = std::max(hi, step_hi);
    }
    if (!(lo <= hi)) return {1.0, 5.0};  // nothing to show yet: the range of a character model's losses
    if (hi - lo < 1e-3 * std::max(1.0, hi)) lo -= 0.05 * std::max(1.0, lo), hi += 0.05 * std::max(1.0, hi);
    if (log_y) return {std::max(lo / 1.05, 1e-4), hi * 1.05};
    double pad = 0.03 * (hi - lo);
    return {std::max(lo - pad, 0.0), hi + pad};
}

std::vector<double> axis_ticks(double lo, double hi, bool log_y, int target) {
    std::vector<double> out;
    if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return out;
    auto linear = [&](double a, double b, int n) {
        double raw = (b - a) / std::max(1, n), mag = std::pow(10.0, std::floor(std::log10(raw)));
        double step = 10 * mag;
        for (double m : {1.0, 2.0, 5.0})
            if (m * mag >= raw) {
                step = m * mag;
                break;
            }
        for (double v = std::ceil(a / step) * step; v <= b + 1e-9 * step; v += step) out.push_back(std::abs(v) < 1e-12 ? 0 : v);
    };
    if (!log_y || lo <= 0 || hi / lo < 4) {
        linear(lo, hi, target);
        return out;
    }
    for (int e = int(std::floor(std::log10(lo))); e <= int(std::ceil(std::log10(hi))); e++)
        for (double m : {1.0, 2.0, 5.0}) {
            double v = m * std::pow(10.0, e);
            if (v >= lo && v <= hi) out.push_back(v);
        }
    if (out.size() > size_t(2 * target)) {  // many decades: every decade alone
        std::vector<double> decades;
        for (double v : out)
            if (std::abs(std::log10(v) - std::round(std::log10(v))) < 1e-9) decades.push_back(v);
        out = decades;
    }
    return out;
}

std::string compact_number(double v) {
    char buf[32];
    double a = std::abs(v);
    if (a >= 1e4) {
        int e = int(std::floor(std::log10(a)));
        double m = v / std::pow(10.0, e);
        if (std::abs(m - std::round(m)) < 0.05) std::snprintf(buf, sizeof buf, "%.0fe%d", m, e);
        else std::snprintf(buf, sizeof buf, "%.1fe%d", m, e);
    } else if (a >= 100) {
        std::snprintf(buf, sizeof buf, "%.0f", v);
    } else if (a >= 10) {
        std::snprintf(buf, sizeof buf, "%.1f", v);
    } else if (a >= 0.01 || a == 0) {
        std::snprintf(buf, sizeof buf, "%.2f", v);
    } else {
        std::snprintf(buf, sizeof buf, "%.0e", v);
    }
    return buf;
}

}  // namespace attn
