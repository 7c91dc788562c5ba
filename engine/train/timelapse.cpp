// The attention time-lapse's data: fp16 storage, the recording schedule, thinning, per-head summaries.
#include "train/timelapse.h"

#include "train/dataset.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

namespace attn {

uint16_t float_to_half(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t exp = (x >> 23) & 0xffu, mant = x & 0x7fffffu;
    if (exp == 0xff) return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0));  // Inf, NaN
    int e = int(exp) - 127 + 15;
    if (e >= 0x1f) return uint16_t(sign | 0x7c00u);  // too large: Inf
    if (e <= 0) {                                     // a subnormal half, or 0
        if (e < -10) return uint16_t(sign);
        mant |= 0x800000u;
        uint32_t shift = uint32_t(14 - e);
        uint32_t h = mant >> shift, rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rest > half || (rest == half && (h & 1))) h++;
        return uint16_t(sign | h);
    }
    uint32_t h = (uint32_t(e) << 10) | (mant >> 13), rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) h++;  // may carry into the exponent: still right
    return uint16_t(sign | h);
}

float half_to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, x;
    if (exp == 0x1f) {
        x = sign | 0x7f800000u | (mant << 13);
    } else if (exp == 0) {
        if (mant == 0) {
            x = sign;
        } else {  // subnormal: normalise
            int e = -1;
            do { mant <<= 1; e++; } while (!(mant & 0x400u));
            x = sign | (uint32_t(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
        }
    } else {
        x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

float ProbeSnapshot::att_at(int P, int NH, int l, int h, int i, int j) const {
    return half_to_float(att[((size_t(l) * NH + h) * P + i) * P + j]);
}

double ProbeSnapshot::mean_loss() const {
    double s = 0;
    size_t n = 0;
    for (float v : char_loss)
        if (!std::isnan(v)) {
            s += v;
            n++;
        }
    return n ? s / double(n) : 0;
}

std::vector<std::string> probe_chars(const std::vector<uint32_t>& tokens, const std::string& text,
                                     const std::vector<uint32_t>& vocab) {
    std::vector<uint32_t> cps;
    bool aligned = decode_utf8(text, cps, nullptr) && cps.size() == tokens.size();
    std::vector<std::string> out;
    for (size_t t = 0; t < tokens.size(); t++)
        out.push_back(aligned ? encode_utf8(cps[t]) : tokens[t] < vocab.size() ? encode_utf8(vocab[tokens[t]]) : "?");
    return out;
}

std::vector<uint8_t> probe_unknown(const std::vector<uint32_t>& tokens, const std::string& text,
                                   const std::vector<uint32_t>& vocab) {
    std::vector<uint32_t> cps;
    std::vector<uint8_t> out(tokens.size(), 0);
    if (vocab.empty()) return out;  // BPE tokens (Dataset::vocab() empty): every byte has one
    if (!decode_utf8(text, cps, nullptr) || cps.size() != tokens.size()) return out;
    for (size_t t = 0; t < tokens.size(); t++) out[t] = tokens[t] >= vocab.size() || vocab[tokens[t]] != cps[t];
    return out;
}

void mask_unknown(ProbeSnapshot& s, const std::vector<uint8_t>& unknown) {
    for (size_t t = 1; t < unknown.size() && t - 1 < s.char_loss.size(); t++)
        if (unknown[t]) s.char_loss[t - 1] = std::numeric_limits<float>::quiet_NaN();
}

bool timelapse_due(int step) {
    if (step < 0) return false;
    if (step < 10) return step <= 6 || step == 8;
    int m = step;
    while (m % 10 == 0) m /= 10;
    return m == 1 || m == 2 || m == 3 || m == 4 || m == 5 || m == 6 || m == 8 || m == 12 || m == 15 || m == 25;
}

int timelapse_expected(int max_iters, int eval_interval) {
    int n = 0;
    for (int s = 0; s <= max_iters; s++) {
        bool eval = s == max_iters || (eval_interval > 0 && s % eval_interval == 0);
        n += timelapse_due(s) || eval;
    }
    return n;
}

uint16_t float_to_bf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);  // NaN stays NaN
    x += 0x7fffu + ((x >> 16) & 1);  // round to nearest even
    return uint16_t(x >> 16);
}

float bf16_to_float(uint16_t b) {
    uint32_t x = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

std::vector<float> RecordedWeights::values() const {
    if (!f32.empty()) return f32;
    std::vector<float> out(bf16.size());
    for (size_t i = 0; i < out.size(); i++) out[i] = bf16_to_float(bf16[i]);
    return out;
}

void RecordedWeights::to_bf16() {
    if (f32.empty()) return;
    bf16.resize(f32.size());
    for (size_t i = 0; i < f32.size(); i++) bf16[i] = float_to_bf16(f32[i]);
    f32.clear();
    f32.shrink_to_fit();
}

void TimeLapse::reset(std::vector<uint32_t> tokens, std::string text, int n_layer, int n_head) {
    m_tokens = std::move(tokens);
    m_text = std::move(text);
    m_layers = n_layer;
    m_heads = n_head;
    m_snaps.clear();
    m_weights.clear();
    m_bf16 = false;
    m_thinned = 0;
}

void TimeLapse::add(ProbeSnapshot s, std::vector<float> weights) {
    RecordedWeights w;
    w.f32 = std::move(weights);
    add(std::move(s), std::move(w));
}

void TimeLapse::add(ProbeSnapshot s, RecordedWeights w) {
    if (w.is_bf16() && !m_bf16) {
        m_bf16 = true;
        for (auto& k : m_weights) k.to_bf16();
    }
    if (!w.empty() && !m_bf16 && bytes() + w.bytes() + s.bytes() > m_budget) {
        // fp32 does not fit: every kept weight goes to bf16 (half the bytes) before any snapshot is thinned
        m_bf16 = true;
        for (auto& k : m_weights) k.to_bf16();
    }
    if (m_bf16) w.to_bf16();
    auto at = std::lower_bound(m_snaps.begin(), m_snaps.end(), s.step,
                               [](const ProbeSnapshot& a, int step) { return a.step < step; });
    size_t i = size_t(at - m_snaps.begin());
    if (at != m_snaps.end() && at->step == s.step) {
        *at = std::move(s);
        m_weights[i] = std::move(w);
    } else {
        m_snaps.insert(at, std::move(s));
        m_weights.insert(m_weights.begin() + long(i), std::move(w));
    }
    thin();
}

void TimeLapse::set_views(std::vector<uint32_t> tokens, std::string text, std::vector<ProbeSnapshot> views) {
    m_tokens = std::move(tokens);
    m_text = std::move(text);
    for (size_t i = 0; i < views.size() && i < m_snaps.size(); i++) views[i].step = m_snaps[i].step;
    views.resize(m_snaps.size());
    m_snaps = std::move(views);
}

void TimeLapse::truncate_after(int step) {
    while (!m_snaps.empty() && m_snaps.back().step > step) {
        m_snaps.pop_back();
        m_weights.pop_back();
    }
}

bool TimeLapse::has_weights() const {
    if (m_weights.empty()) return false;
    return std::none_of(m_weights.begin(), m_weights.end(), [](const RecordedWeights& w) { return w.empty(); });
}

void TimeLapse::plan(size_t params, int expected) {
    if (m_bf16 || expected <= 0) return;
    if (double(params) * 4.0 * expected > double(m_budget)) {
        m_bf16 = true;
        for (auto& k : m_weights) k.to_bf16();
    }
}

size_t TimeLapse::weights_bytes() const {
    size_t n = 0;
    for (const auto& w : m_weights) n += w.bytes();
    return n;
}

void TimeLapse::set_budget(size_t bytes) {
    m_budget = bytes;
    thin();
}

size_t TimeLapse::bytes() const {
    size_t n = m_tokens.size() * 4 + m_text.size();
    for (const auto& s : m_snaps) n += s.bytes();
    return n + weights_bytes();
}

void TimeLapse::thin() {
    size_t total = bytes();
    while (total > m_budget && m_snaps.size() > 2) {
        size_t drop = 1;
        double best = 1e300;
        for (size_t i = 1; i + 1 < m_snaps.size(); i++) {
            double gap = std::log1p(double(m_snaps[i + 1].step)) - std::log1p(double(m_snaps[i - 1].step));
            if (gap < best) best = gap, drop = i;
        }
        total -= m_snaps[drop].bytes() + m_weights[drop].bytes();
        m_snaps.erase(m_snaps.begin() + long(drop));
        m_weights.erase(m_weights.begin() + long(drop));
        m_thinned++;
    }
}

bool TimeLapse::has_step(int step) const {
    return std::any_of(m_snaps.begin(), m_snaps.end(), [&](const ProbeSnapshot& s) { return s.step == step; });
}

const ProbeSnapshot* TimeLapse::nearest(int step) const {
    const ProbeSnapshot* best = nullptr;
    // distances in 64 bits: |s.step - step| of two ints does not fit an int (INT_MIN and 0 would overflow)
    auto distance = [step](const ProbeSnapshot& s) { return std::abs(int64_t(s.step) - int64_t(step)); };
    for (const auto& s : m_snaps)
        if (!best || distance(s) < distance(*best)) best = &s;
    return best;
}

std::vector<float> snapshot_head(const ProbeSnapshot& s, int P, int NH, int l, int h) {
    std::vector<float> out(size_t(P) * P);
    const uint16_t* src = s.att.data() + (size_t(l) * NH + h) * P * P;
    for (size_t k = 0; k < out.size(); k++) out[k] = half_to_float(src[k]);
    return out;
}

HeadSummary summarize_head(const std::vector<float>& att, int P, bool causal) {
    HeadSummary out;
    if (P < 1) return out;
    int rows_past = 0;
    for (int i = 0; i < P; i++) {
        const float* row = att.data() + size_t(i) * P;
        int n = causal ? i + 1 : P;  // the positions this row can attend to
        double ent = 0, dist = 0;
        for (int j = 0; j < n; j++) {
            double p = row[j];
            if (p > 0) ent -= p * std::log(p);
            dist += p * std::abs(i - j);
        }
        out.entropy += ent;
        out.mean_distance += dist;
        if (i >= 1) {  // row 0 of a causal head has one choice: it says nothing
            rows_past++;
            out.uniformity += n > 1 ? ent / std::log(double(n)) : 1.0;
            out.previous += row[i - 1];
            out.current += row[i];
            out.first += row[0];
        }
    }
    out.entropy /= P;
    out.mean_distance /= P;
    if (rows_past > 0) {
        out.uniformity /= rows_past;
        out.previous /= rows_past;
        out.current /= rows_past;
        out.first /= rows_past;
        if (out.previous > 0.5) out.label = "previous character";
        else if (out.current > 0.5) out.label = "current character";
        else if (out.first > 0.5) out.label = "first character";
        else if (out.uniformity > 0.9) out.label = "uniform";
    }
    return out;
}

double mean_attention_entropy(const ProbeSnapshot& s, int P, int L, int NH) {
    if (L == 0 || NH == 0 || P == 0) return 0;
    double sum = 0;  // each head's entropy is its rows' mean; masked entries are 0, so causal or not is the same
    for (int l = 0; l < L; l++)
        for (int h = 0; h < NH; h++) sum += summarize_head(snapshot_head(s, P, NH, l, h), P, false).entropy;
    return sum / (double(L) * NH);
}

}  // namespace attn
