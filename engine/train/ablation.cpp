// Head ablation by weight surgery (ablation.h), the head-list syntax and the in-context learning score.
#include "train/ablation.h"

#include <algorithm>
#include <cmath>

#include "vk/check.h"

namespace attn {

std::vector<HeadId> parse_head_list(const std::string& text, int n_layer, int n_head) {
    if (n_layer <= 0 || n_head <= 0) throw Error("this model has no attention: there is no head to knock out");
    std::vector<HeadId> out;
    size_t at = 0;
    while (at <= text.size()) {
        size_t end = std::min(text.find(',', at), text.size());
        std::string item = text.substr(at, end - at);
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        if (item.empty()) {
            if (text.find_first_not_of(", ") == std::string::npos)
                throw Error("no head given: list heads as LAYER:HEAD, from 1, e.g. 1:2,2:1");
            throw Error("an empty item in the head list '" + text + "': list heads as LAYER:HEAD, e.g. 1:2,2:1");
        }
        size_t colon = item.find(':');
        int l = 0, h = 0;
        size_t used_l = 0, used_h = 0;
        try {
            if (colon == std::string::npos) throw std::invalid_argument("no colon");
            l = std::stoi(item.substr(0, colon), &used_l);
            h = std::stoi(item.substr(colon + 1), &used_h);
        } catch (const std::exception&) {
            used_l = 0;
        }
        if (colon == std::string::npos || used_l != colon || used_h != item.size() - colon - 1 || used_l == 0)
            throw Error("'" + item + "' is not a head: write LAYER:HEAD, from 1, e.g. 1:2");
        if (l < 1 || l > n_layer || h < 1 || h > n_head)
            throw Error("head " + item + " is out of range: the model has layers 1 to " + std::to_string(n_layer) +
                        " and heads 1 to " + std::to_string(n_head));
        HeadId id{l - 1, h - 1};
        if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
        at = end + 1;
    }
    return out;
}

std::string head_list_text(const std::vector<HeadId>& heads) {
    std::string s;
    for (const HeadId& h : heads)
        s += (s.empty() ? "" : ", ") + std::string("L") + std::to_string(h.layer + 1) + " H" + std::to_string(h.head + 1);
    return s;
}

const char* ablation_mode_name(AblationMode m) { return m == AblationMode::Zero ? "zero" : "mean"; }

namespace {

// b += W[:, cols] @ m for a linear layer W (out, in) row-major, bias b (out,): the constant m (hs,) entering at
// input columns [col0, col0 + hs).
void fold_constant(std::vector<float>& flat, const ParamInfo& w, const ParamInfo& b, size_t col0,
                   const std::vector<double>& m) {
    size_t out = size_t(w.shape[0]), in = size_t(w.shape[1]);
    for (size_t o = 0; o < out; o++) {
        double s = 0;
        for (size_t d = 0; d < m.size(); d++) s += double(flat[w.offset + o * in + col0 + d]) * m[d];
        flat[b.offset + o] = float(double(flat[b.offset + o]) + s);
    }
}

}  // namespace

std::vector<float> ablate_weights(std::vector<float> flat, const ModelLayout& layout, const Config& cfg,
                                  const std::vector<HeadId>& heads, AblationMode mode, const std::vector<double>& means) {
    const int L = cfg.n_layer, NH = cfg.n_head;
    const size_t HS = size_t(cfg.hs()), A = size_t(cfg.attn_dim());
    if (cfg.kind == ModelKind::Bigram) throw Error("the bigram model has no attention: there is no head to knock out");
    if (mode == AblationMode::Mean && means.size() != size_t(L) * A)
        throw Error("internal error: mean ablation needs every block's mean head output");
    const auto& info = layout.info;
    for (const HeadId& id : heads) {
        if (id.layer < 0 || id.layer >= L || id.head < 0 || id.head >= NH) throw Error("internal error: head out of range");
        const BlockParams& P = layout.blocks[size_t(id.layer)];
        // the value rows of the fused q | k | v projection (3A, C): rows 2A + h*hs .. 2A + (h+1)*hs
        const ParamInfo& qkv = info[size_t(P.qkv)];
        size_t C = size_t(qkv.shape[1]), row0 = 2 * A + size_t(id.head) * HS;
        std::fill(flat.begin() + long(qkv.offset + row0 * C), flat.begin() + long(qkv.offset + (row0 + HS) * C), 0.0f);
        std::vector<double> m;
        if (mode == AblationMode::Mean)
            m.assign(means.begin() + long(size_t(id.layer) * A + size_t(id.head) * HS),
                     means.begin() + long(size_t(id.layer) * A + (size_t(id.head) + 1) * HS));
        if (P.qkv_b >= 0) {  // the value bias: zero, or the mean itself
            const ParamInfo& b = info[size_t(P.qkv_b)];
            for (size_t d = 0; d < HS; d++) flat[b.offset + row0 + d] = m.empty() ? 0.0f : float(m[d]);
            continue;
        }
        if (m.empty()) continue;
        size_t col0 = size_t(id.head) * HS;
        bool last = id.layer == L - 1;
        if (cfg.residual && P.proj_b >= 0) {
            fold_constant(flat, info[size_t(P.proj_w)], info[size_t(P.proj_b)], col0, m);
        } else if (!cfg.residual && cfg.ffn && !cfg.layernorm && P.fc_b >= 0) {
            fold_constant(flat, info[size_t(P.fc_w)], info[size_t(P.fc_b)], col0, m);
        } else if (!cfg.residual && !cfg.ffn && last && !cfg.layernorm && layout.lm_b >= 0 && layout.lm_w > 0) {
            fold_constant(flat, info[size_t(layout.lm_w)], info[size_t(layout.lm_b)], col0, m);
        } else {
            throw Error("mean ablation needs a bias after the heads (a value bias, or an output projection's, or the "
                        "next linear layer's), and this model has none there: use zero ablation");
        }
    }
    return flat;
}

double icl_score(const std::vector<double>& by_position) {
    const int T = int(by_position.size());
    if (T < 2) return 0;
    const double c = T / 10.0, w = T / 20.0;
    auto mean = [&](int a, int b) {  // positions a..b inclusive
        double s = 0;
        for (int t = a; t <= b; t++) s += by_position[size_t(t)];
        return s / (b - a + 1);
    };
    int a = std::clamp(int(std::ceil(c - w)), 0, T - 1), b = std::clamp(int(std::floor(c + w)), a, T - 1);
    if (b < a) b = a;
    int tail = std::max(1, T / 10);
    return mean(a, b) - mean(T - tail, T - 1);
}

}  // namespace attn
