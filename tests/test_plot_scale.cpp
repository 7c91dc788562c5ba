// The loss plot's axes (app/window/plot_scale.h): a spike cannot take the y range, ticks are 1-2-5, tick text is short.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "plot_scale.h"

using namespace attn;

TEST_CASE("one spike of a bad learning rate does not take over the y range", "[plot]") {
    std::vector<float> losses;
    for (int i = 0; i < 400; i++) losses.push_back(4.2f - 1.5f * float(i) / 400.f);  // 4.2 down to 2.7
    losses[300] = 60000.f;  // lr 0.8 set live: one step's loss explodes
    std::vector<double> est = {4.17, 3.1, 2.8};
    AxisRange r = loss_y_range(losses, est, {}, false);
    CHECK(r.hi < 5.0);  // the spike is left out (drawn clipped, with a marker)
    CHECK(r.hi >= 4.2);
    CHECK(r.lo <= 2.7);
    CHECK(r.lo >= 2.5);
    // lr 10: many steps explode between two estimates; the range stays within twice the largest estimate
    std::vector<float> burst = losses;
    for (int i = 350; i < 400; i++) burst[size_t(i)] = 2e7f;
    for (bool log_y : {false, true}) {
        AxisRange b = loss_y_range(burst, est, {}, log_y);
        CHECK(b.hi <= 2 * 4.17);
        CHECK(b.hi >= 4.2);
    }
    // a run that really sits high (every step) keeps its range
    std::vector<float> high(400, 20000.f);
    AxisRange h = loss_y_range(high, {}, {}, false);
    CHECK(h.lo < 20000.0);
    CHECK(h.hi > 20000.0);
    // the estimates are always inside, even when far above the per-step losses
    AxisRange e = loss_y_range(losses, {2e7}, {}, false);
    CHECK(e.hi >= 2e7);
}

TEST_CASE("the y range takes the reference lines and survives NaN and empty input", "[plot]") {
    std::vector<float> losses = {3.0f, NAN, 2.9f, INFINITY, 2.8f};
    AxisRange r = loss_y_range(losses, {NAN}, {1.48}, false);
    CHECK(r.lo <= 1.48);
    CHECK(r.hi >= 3.0);
    CHECK(std::isfinite(r.lo));
    CHECK(std::isfinite(r.hi));
    AxisRange empty = loss_y_range({}, {}, {}, false);
    CHECK(empty.hi > empty.lo);
    AxisRange flat = loss_y_range({2.5f, 2.5f}, {}, {}, false);
    CHECK(flat.hi > flat.lo);
    AxisRange lg = loss_y_range({0.f, -1.f, 3.f}, {}, {}, true);  // log axis: non-positive values left out
    CHECK(lg.lo > 0);
    CHECK(lg.lo <= 3.0);
}

TEST_CASE("axis ticks are 1-2-5 steps, on a log axis 1, 2, 5 x 10^k", "[plot]") {
    auto lin = axis_ticks(1.4, 4.3, false, 6);
    REQUIRE(lin.size() >= 3);
    CHECK(lin.size() <= 12);
    double step = lin[1] - lin[0];
    for (size_t i = 1; i < lin.size(); i++) CHECK(lin[i] - lin[i - 1] == Approx(step));
    double mag = std::pow(10.0, std::floor(std::log10(step)));
    double m = step / mag;
    CHECK((std::abs(m - 1) < 1e-9 || std::abs(m - 2) < 1e-9 || std::abs(m - 5) < 1e-9));
    CHECK(lin.front() >= 1.4);
    CHECK(lin.back() <= 4.3);

    auto lg = axis_ticks(1.0, 60000.0, true, 6);
    REQUIRE(lg.size() >= 3);
    for (double v : lg) {
        double e = std::floor(std::log10(v) + 1e-9), mm = v / std::pow(10.0, e);
        CHECK((std::abs(mm - 1) < 1e-6 || std::abs(mm - 2) < 1e-6 || std::abs(mm - 5) < 1e-6));
    }
    for (size_t i = 1; i < lg.size(); i++) CHECK(lg[i] / lg[i - 1] >= 2.0 - 1e-9);  // never bunched together
    auto many = axis_ticks(1e-2, 1e7, true, 6);  // nine decades: one tick per decade
    CHECK(many.size() <= 12);
    CHECK(many.size() >= 6);
    CHECK(axis_ticks(2.0, 2.0, false, 5).empty());
    CHECK(axis_ticks(NAN, 3.0, false, 5).empty());
}

TEST_CASE("tick text is compact", "[plot]") {
    CHECK(compact_number(2.35) == "2.35");
    CHECK(compact_number(0.5) == "0.50");
    CHECK(compact_number(12.5) == "12.5");
    CHECK(compact_number(600) == "600");
    CHECK(compact_number(60000) == "6e4");
    CHECK(compact_number(2e7) == "2e7");
    CHECK(compact_number(25000000) == "2.5e7");
    CHECK(compact_number(0) == "0.00");
    for (double v : {1.48, 60000.0, 2e7, 123456789.0, 0.001}) CHECK(compact_number(v).size() <= 5);
}
