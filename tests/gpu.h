// Test helpers: one validation-enabled Vulkan context for the whole suite, tensors, closeness checks.
#pragma once
#include <catch2/catch.hpp>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "rng.h"
#include "vk/program.h"

namespace test {

attn::Context& ctx();          // created on first use, Khronos validation on
attn::KernelCache& kernels();

// The suite context's kernel policy changed for one scope (a kernel family forced: `pol->matmul =
// attn::MatmulChoice::tiled`), restored when the scope ends, also when a REQUIRE throws.
class PolicyGuard {
public:
    PolicyGuard() : m_saved(ctx().policy()) {}
    ~PolicyGuard() { ctx().edit_policy() = m_saved; }
    PolicyGuard(const PolicyGuard&) = delete;
    PolicyGuard& operator=(const PolicyGuard&) = delete;
    attn::KernelPolicy* operator->() { return &ctx().edit_policy(); }
    void reset() { ctx().edit_policy() = m_saved; }  // back to the device's defaults

private:
    attn::KernelPolicy m_saved;
};

// An environment variable set for one scope (LP_NUM_THREADS; the policy parser's own test), restored when the scope
// ends, also when a REQUIRE throws.
class EnvGuard {
public:
    explicit EnvGuard(const char* name) : m_name(name) {
        if (const char* v = std::getenv(name)) m_old = v, m_had = true;
    }
    ~EnvGuard() {
        if (m_had) setenv(m_name.c_str(), m_old.c_str(), 1);
        else unsetenv(m_name.c_str());
    }
    EnvGuard(const EnvGuard&) = delete;
    EnvGuard& operator=(const EnvGuard&) = delete;
    void set(const char* value) { setenv(m_name.c_str(), value, 1); }
    void clear() { unsetenv(m_name.c_str()); }

private:
    std::string m_name, m_old;
    bool m_had = false;
};

inline std::vector<double> randn(attn::Rng& r, size_t n, double scale = 1.0) {
    std::vector<double> v(n);
    for (auto& x : v) x = r.normal() * scale;
    return v;
}
inline std::vector<float> to_f(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }
inline std::vector<double> to_d(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

template <typename T> attn::Buffer upload(const std::vector<T>& v) {
    attn::Buffer b(ctx(), std::max<size_t>(v.size() * sizeof(T), 4));
    b.upload(v);
    return b;
}
inline attn::Buffer upload(const std::vector<double>& v) { return upload(to_f(v)); }
inline attn::Buffer zeros(size_t n) {
    attn::Buffer b(ctx(), std::max<size_t>(n * 4, 4));
    b.fill_zero();
    return b;
}
inline std::vector<double> download(const attn::Buffer& b, size_t n) { return to_d(b.read<float>(n)); }

// |got - want| <= atol + rtol*|want| everywhere; reports the worst element when it fails.
inline void require_close(const std::vector<double>& got, const std::vector<double>& want, double atol, double rtol,
                          const std::string& what) {
    REQUIRE(got.size() == want.size());
    size_t worst = 0;
    double worst_excess = -1e300;
    for (size_t i = 0; i < got.size(); i++) {
        double excess = std::abs(got[i] - want[i]) - (atol + rtol * std::abs(want[i]));
        if (!(excess <= worst_excess) || std::isnan(got[i])) { worst_excess = std::isnan(got[i]) ? 1e300 : excess; worst = i; }
    }
    INFO(what << ": worst element " << worst << " got " << got[worst] << " want " << want[worst] << " (atol " << atol
              << ", rtol " << rtol << ")");
    CHECK(worst_excess <= 0);
}

// The message of the attn::Error that f throws, or "" when it throws none.
inline std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const attn::Error& e) {
        return e.what();
    }
    return "";
}

// Runs `record` in a fresh program and waits.
template <typename F> void run(F&& record) {
    attn::Program p(ctx());
    p.begin();
    record(p);
    p.end();
    p.run();
}

}  // namespace test
