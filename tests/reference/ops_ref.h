// Plain-loop CPU references of every kernel, in double precision: the ground truth the GPU is tested against.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace ref {

using Vec = std::vector<double>;
using U32 = std::vector<uint32_t>;

// Philox4x32-10, bit for bit as shaders/common/philox.glsl: the twin drops the same elements as the GPU.
// One block per 4 consecutive elements (counter index / 4), its four outputs for elements 4k .. 4k+3.
inline bool dropout_keep(const uint32_t key_in[2], uint32_t site, uint32_t index, float p) {
    if (p <= 0.0f) return true;
    uint32_t c[4] = {index >> 2, site, 0, 0}, k[2] = {key_in[0], key_in[1]};
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = uint64_t(0xD2511F53u) * c[0], p1 = uint64_t(0xCD9E8D57u) * c[2];
        uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0), hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
        uint32_t n[4] = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
        for (int i = 0; i < 4; i++) c[i] = n[i];
        k[0] += 0x9E3779B9u;
        k[1] += 0xBB67AE85u;
    }
    return float(c[index & 3] >> 8) * (1.0f / 16777216.0f) >= p;
}
struct Drop {
    float p = 0;
    uint32_t site = 0;
    uint32_t key[2] = {0, 0};
    double scale(uint32_t index) const { return dropout_keep(key, site, index, p) ? 1.0 / (1.0 - double(p)) : 0.0; }
};

// out (n) = residual + dropout(x)
inline void dropout_forward(Vec& out, const Vec& x, const Vec* res, const Drop& d) {
    out.resize(x.size());
    for (size_t i = 0; i < x.size(); i++) out[i] = (res ? (*res)[i] : 0.0) + x[i] * d.scale(uint32_t(i));
}
inline void dropout_backward(Vec& dx, const Vec& dout, const Drop& d) {
    dx.resize(dout.size());
    for (size_t i = 0; i < dout.size(); i++) dx[i] = dout[i] * d.scale(uint32_t(i));
}

// out (N,C) = LayerNorm(inp) * w + b, eps 1e-5
inline void layernorm_forward(Vec& out, const Vec& inp, const Vec& w, const Vec& b, int N, int C) {
    out.assign(size_t(N) * C, 0);
    for (int r = 0; r < N; r++) {
        double m = 0, v = 0;
        for (int c = 0; c < C; c++) m += inp[r * C + c];
        m /= C;
        for (int c = 0; c < C; c++) v += (inp[r * C + c] - m) * (inp[r * C + c] - m);
        double rstd = 1.0 / std::sqrt(v / C + 1e-5);
        for (int c = 0; c < C; c++) out[r * C + c] = (inp[r * C + c] - m) * rstd * w[c] + b[c];
    }
}
inline void layernorm_backward(Vec& dinp, Vec& dw, Vec& db, const Vec& dout, const Vec& inp, const Vec& w, int N, int C) {
    dinp.assign(size_t(N) * C, 0);
    dw.assign(C, 0);
    db.assign(C, 0);
    for (int r = 0; r < N; r++) {
        double m = 0, v = 0;
        for (int c = 0; c < C; c++) m += inp[r * C + c];
        m /= C;
        for (int c = 0; c < C; c++) v += (inp[r * C + c] - m) * (inp[r * C + c] - m);
        double rstd = 1.0 / std::sqrt(v / C + 1e-5), md = 0, mdn = 0;
        for (int c = 0; c < C; c++) {
            double norm = (inp[r * C + c] - m) * rstd, dn = dout[r * C + c] * w[c];
            md += dn;
            mdn += dn * norm;
            dw[c] += dout[r * C + c] * norm;
            db[c] += dout[r * C + c];
        }
        md /= C;
        mdn /= C;
        for (int c = 0; c < C; c++) {
            double norm = (inp[r * C + c] - m) * rstd;
            dinp[r * C + c] = rstd * (dout[r * C + c] * w[c] - md - norm * mdn);
        }
    }
}

// out (B,T,C) = wte[tokens[off[b]+t]] + wpe[t]
inline void embedding_forward(Vec& out, const U32& tokens, const U32& off, const Vec& wte, const Vec* wpe, int B, int T, int C) {
    out.assign(size_t(B) * T * C, 0);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int c = 0; c < C; c++)
                out[(b * T + t) * C + c] = wte[tokens[off[b] + t] * C + c] + (wpe ? (*wpe)[t * C + c] : 0.0);
}
inline void embedding_backward(Vec& dwte, Vec* dwpe, const Vec& dout, const U32& tokens, const U32& off, int B, int T, int C, int V) {
    dwte.assign(size_t(V) * C, 0);
    if (dwpe) dwpe->assign(size_t(T) * C, 0);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int c = 0; c < C; c++) {
                double d = dout[(b * T + t) * C + c];
                dwte[tokens[off[b] + t] * C + c] += d;
                if (dwpe) (*dwpe)[t * C + c] += d;
            }
}

// out (M,N) = inp (M,K) @ w (N,K)^T + bias, optional ReLU
inline void matmul_forward(Vec& out, const Vec& inp, const Vec& w, const Vec* bias, int M, int N, int K, bool relu = false) {
    out.assign(size_t(M) * N, 0);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double s = bias ? (*bias)[n] : 0.0;
            for (int k = 0; k < K; k++) s += inp[m * K + k] * w[n * K + k];
            out[m * N + n] = relu ? std::max(s, 0.0) : s;
        }
}
inline void matmul_backward(Vec& dinp, Vec& dw, Vec* dbias, const Vec& dout, const Vec& inp, const Vec& w, const Vec& out,
                            int M, int N, int K, bool relu = false) {
    dinp.assign(size_t(M) * K, 0);
    dw.assign(size_t(N) * K, 0);
    if (dbias) dbias->assign(N, 0);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double d = dout[m * N + n];
            if (relu && out[m * N + n] <= 0) d = 0;
            for (int k = 0; k < K; k++) {
                dinp[m * K + k] += d * w[n * K + k];
                dw[n * K + k] += d * inp[m * K + k];
            }
            if (dbias) (*dbias)[n] += d;
        }
}

// qkv (B,T,3C) with C = NH*HS -> att (B,NH,T,T), out (B,T,C)
inline void attention_forward(Vec& out, Vec& att, const Vec& qkv, int B, int T, int NH, int HS, bool causal = true,
                              const Drop& drop = {}) {
    int C = NH * HS, C3 = 3 * C;
    out.assign(size_t(B) * T * C, 0);
    att.assign(size_t(B) * NH * T * T, 0);
    double scale = 1.0 / std::sqrt(double(HS));
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            for (int t = 0; t < T; t++) {
                double* row = &att[((b * NH + h) * T + t) * T];
                int tmax = causal ? t : T - 1;
                double mx = -1e300;
                for (int t2 = 0; t2 <= tmax; t2++) {
                    double s = 0;
                    for (int d = 0; d < HS; d++) s += qkv[(b * T + t) * C3 + h * HS + d] * qkv[(b * T + t2) * C3 + C + h * HS + d];
                    row[t2] = s * scale;
                    mx = std::max(mx, row[t2]);
                }
                double sum = 0;
                for (int t2 = 0; t2 <= tmax; t2++) sum += row[t2] = std::exp(row[t2] - mx);
                for (int t2 = 0; t2 <= tmax; t2++) row[t2] /= sum;
                size_t row0 = size_t((b * NH + h) * T + t) * T;
                for (int d = 0; d < HS; d++) {
                    double s = 0;
                    for (int t2 = 0; t2 <= tmax; t2++)
                        s += row[t2] * drop.scale(uint32_t(row0 + t2)) * qkv[(b * T + t2) * C3 + 2 * C + h * HS + d];
                    out[(b * T + t) * C + h * HS + d] = s;
                }
            }
}
inline void attention_backward(Vec& dqkv, const Vec& dout, const Vec& qkv, const Vec& att, int B, int T, int NH, int HS,
                               const Drop& drop = {}) {
    int C = NH * HS, C3 = 3 * C;
    dqkv.assign(size_t(B) * T * C3, 0);
    double scale = 1.0 / std::sqrt(double(HS));
    std::vector<double> datt(T), dpre(T);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            for (int t = 0; t < T; t++) {
                const double* row = &att[((b * NH + h) * T + t) * T];
                size_t row0 = size_t((b * NH + h) * T + t) * T;
                double dot = 0;
                for (int t2 = 0; t2 < T; t2++) {
                    double s = 0, keep = drop.scale(uint32_t(row0 + t2));
                    for (int d = 0; d < HS; d++) s += dout[(b * T + t) * C + h * HS + d] * qkv[(b * T + t2) * C3 + 2 * C + h * HS + d];
                    datt[t2] = s * keep;
                    dot += row[t2] * datt[t2];
                    for (int d = 0; d < HS; d++)  // dv
                        dqkv[(b * T + t2) * C3 + 2 * C + h * HS + d] += row[t2] * keep * dout[(b * T + t) * C + h * HS + d];
                }
                for (int t2 = 0; t2 < T; t2++) dpre[t2] = row[t2] * (datt[t2] - dot);
                for (int t2 = 0; t2 < T; t2++)
                    for (int d = 0; d < HS; d++) {
                        dqkv[(b * T + t) * C3 + h * HS + d] += scale * dpre[t2] * qkv[(b * T + t2) * C3 + C + h * HS + d];
                        dqkv[(b * T + t2) * C3 + C + h * HS + d] += scale * dpre[t2] * qkv[(b * T + t) * C3 + h * HS + d];
                    }
            }
}

// losses (B,T) and mean; targets tokens[off[b]+t+1]
inline double crossentropy_forward(Vec& losses, const Vec& logits, const U32& tokens, const U32& off, int B, int T, int V) {
    losses.assign(size_t(B) * T, 0);
    double mean = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            const double* row = &logits[(b * T + t) * V];
            double mx = *std::max_element(row, row + V), sum = 0;
            for (int v = 0; v < V; v++) sum += std::exp(row[v] - mx);
            losses[b * T + t] = std::log(sum) + mx - row[tokens[off[b] + t + 1]];
            mean += losses[b * T + t];
        }
    return mean / (B * T);
}
inline void crossentropy_backward(Vec& dlogits, const Vec& logits, const U32& tokens, const U32& off, int B, int T, int V) {
    dlogits.assign(size_t(B) * T * V, 0);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            const double* row = &logits[(b * T + t) * V];
            double mx = *std::max_element(row, row + V), sum = 0;
            for (int v = 0; v < V; v++) sum += std::exp(row[v] - mx);
            for (int v = 0; v < V; v++)
                dlogits[(b * T + t) * V + v] =
                    (std::exp(row[v] - mx) / sum - (uint32_t(v) == tokens[off[b] + t + 1] ? 1.0 : 0.0)) / (B * T);
        }
}

// PyTorch AdamW, step t (1-based); weight decay on p[0, decay_end) only (nanoGPT's optimizer groups)
inline void adamw(Vec& p, const Vec& g, Vec& m, Vec& v, double lr, double b1, double b2, double eps, double wd, int t,
                  size_t decay_end = SIZE_MAX) {
    for (size_t i = 0; i < p.size(); i++) {
        p[i] *= 1 - lr * (i < decay_end ? wd : 0.0);
        m[i] = b1 * m[i] + (1 - b1) * g[i];
        v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
        double mh = m[i] / (1 - std::pow(b1, t)), vh = v[i] / (1 - std::pow(b2, t));
        p[i] -= lr * mh / (std::sqrt(vh) + eps);
    }
}

// torch.nn.utils.clip_grad_norm_(max_norm): g *= min(1, max_norm / (|g| + 1e-6)); returns |g| before.
inline double clip_grad_norm(Vec& g, double max_norm) {
    double ss = 0;
    for (double x : g) ss += x * x;
    double norm = std::sqrt(ss), scale = std::min(1.0, max_norm / (norm + 1e-6));
    for (double& x : g) x *= scale;
    return norm;
}

// Exact GELU and its backward: out = x Phi(x), dx = dout (Phi(x) + x phi(x)). tanh_form: the tanh approximation,
// out = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), differentiated by hand.
inline void gelu_forward(Vec& out, const Vec& x, bool tanh_form = false) {
    out.resize(x.size());
    const double k = std::sqrt(2.0 / M_PI);
    for (size_t i = 0; i < x.size(); i++)
        out[i] = tanh_form ? 0.5 * x[i] * (1.0 + std::tanh(k * (x[i] + 0.044715 * x[i] * x[i] * x[i])))
                           : 0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0)));
}
inline void gelu_backward(Vec& dx, const Vec& dout, const Vec& x, bool tanh_form = false) {
    dx.resize(x.size());
    const double k = std::sqrt(2.0 / M_PI);
    for (size_t i = 0; i < x.size(); i++) {
        if (tanh_form) {
            double t = std::tanh(k * (x[i] + 0.044715 * x[i] * x[i] * x[i]));
            dx[i] = dout[i] * (0.5 * (1.0 + t) + 0.5 * x[i] * (1.0 - t * t) * k * (1.0 + 3 * 0.044715 * x[i] * x[i]));
            continue;
        }
        double cdf = 0.5 * (1.0 + std::erf(x[i] / std::sqrt(2.0)));
        double pdf = std::exp(-0.5 * x[i] * x[i]) / std::sqrt(2.0 * M_PI);
        dx[i] = dout[i] * (cdf + x[i] * pdf);
    }
}

}  // namespace ref
