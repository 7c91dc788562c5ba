// The loss plot's axes, computed apart from drawing (tests/test_plot_scale.cpp): a y range one spike cannot take
// over, tick values (1-2-5 steps, on a log axis 1, 2, 5 x 10^k) and compact tick text.
#pragma once
#include <string>
#include <vector>

namespace attn {

struct AxisRange {
    double lo = 0, hi = 1;
};

// The y range: every finite estimate, the per-step losses up to their 99.5th percentile (a single spike of a bad
// learning rate does not flatten every other point) and below 1.9 x the largest estimate once there is one, and the
// reference values shown; padded a little (within 2 x the largest estimate). On a log axis lo stays above 0.
AxisRange loss_y_range(const std::vector<float>& step_losses, const std::vector<double>& estimates,
                       const std::vector<double>& refs, bool log_y);

// Tick values inside [lo, hi], about `target` of them: linear, multiples of 1, 2 or 5 x 10^k; log, the values
// 1, 2, 5 x 10^k (with every multiple of a smaller step when the range spans less than a factor of 4).
std::vector<double> axis_ticks(double lo, double hi, bool log_y, int target);

// Tick text, at most 5 characters: 2.35, 0.50, 12.5, 600, 6e4, 2.5e7.
std::string compact_number(double v);

}  // namespace attn
