// Seeded, portable RNG (splitmix64 + xoshiro256**): the same numbers on every compiler and OS.
#pragma once
#include <cmath>
#include <cstdint>

namespace attn {

class Rng {
public:
    explicit Rng(uint64_t seed = 1337) { reseed(seed); }
    void reseed(uint64_t seed) {
        uint64_t z = seed;
        for (auto& s : m_s) s = splitmix(z);
    }
    uint64_t next() {
        uint64_t r = rotl(m_s[1] * 5, 7) * 9, t = m_s[1] << 17;
        m_s[2] ^= m_s[0]; m_s[3] ^= m_s[1]; m_s[1] ^= m_s[2]; m_s[0] ^= m_s[3];
        m_s[2] ^= t; m_s[3] = rotl(m_s[3], 45);
        return r;
    }
    // uniform integer in [0, n), without modulo bias
    uint64_t below(uint64_t n) {
        uint64_t limit = UINT64_MAX - UINT64_MAX % n;
        uint64_t x;
        do x = next(); while (x >= limit);
        return x % n;
    }
    double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
    double normal() {  // Box-Muller
        double u1 = uniform(), u2 = uniform();
        if (u1 < 1e-300) u1 = 1e-300;
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    }
    // Whole state, for checkpoints.
    const uint64_t* state() const { return m_s; }
    void set_state(const uint64_t s[4]) { for (int i = 0; i < 4; i++) m_s[i] = s[i]; }

private:
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    static uint64_t splitmix(uint64_t& x) {
        uint64_t z = (x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    uint64_t m_s[4];
};

}  // namespace attn
