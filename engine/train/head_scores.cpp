// Head scores: TransformerLens' detection patterns on attention maps, the induction probe, labels (head_scores.h).
#include "train/head_scores.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "rng.h"
#include "text/bpe.h"
#include "vk/check.h"

namespace attn {

double pattern_score(const std::vector<float>& att, int P, const std::function<bool(int i, int j)>& pattern) {
    double on = 0, total = 0;
    for (int i = 1; i < P; i++) {
        const float* row = att.data() + size_t(i) * size_t(P);
        double hit = 0;
        bool any = false;
        for (int j = 0; j <= i; j++)
            if (pattern(i, j)) hit += row[j], any = true;
        if (!any) continue;  // nowhere to look: the row says nothing of this role
        on += hit;
        for (int j = 0; j < P; j++) total += row[j];  // the whole row: an encoder's attention past i counts too
    }
    return total > 0 ? on / total : std::nan("");
}

double previous_score(const std::vector<float>& att, int P) {
    return pattern_score(att, P, [](int i, int j) { return j == i - 1; });
}

double current_score(const std::vector<float>& att, int P) {
    return pattern_score(att, P, [](int i, int j) { return j == i; });
}

double first_score(const std::vector<float>& att, int P) {
    return pattern_score(att, P, [](int, int j) { return j == 0; });
}

double duplicate_score(const std::vector<float>& att, const std::vector<uint32_t>& x) {
    return pattern_score(att, int(x.size()), [&](int i, int j) { return j < i && x[j] == x[i]; });
}

double induction_score(const std::vector<float>& att, const std::vector<uint32_t>& x) {
    return pattern_score(att, int(x.size()), [&](int i, int j) { return j >= 1 && j < i && x[j - 1] == x[i]; });
}

// The ids an induction probe draws from: every one but spaces and control characters, while two others remain.
static std::vector<uint32_t> probe_alphabet(const std::vector<uint32_t>& vocab) {
    std::vector<uint32_t> ids;
    for (size_t id = 0; id < vocab.size(); id++)
        if (vocab[id] > 0x20 && (vocab[id] < 0x7f || vocab[id] > 0xa0)) ids.push_back(uint32_t(id));
    if (ids.size() < 2) {
        ids.resize(vocab.size());
        std::iota(ids.begin(), ids.end(), 0u);
    }
    return ids;
}

std::vector<uint32_t> bpe_probe_vocab(const BpeTokenizer& tokenizer) {
    std::vector<uint32_t> v(size_t(tokenizer.vocab_size()), ' ');
    for (int id = 0; id < tokenizer.vocab_size(); id++) {
        const std::string& t = tokenizer.token(id);
        bool plain = !t.empty() && id != tokenizer.eot();
        for (unsigned char c : t) plain = plain && c > 0x20 && c != 0x7f;
        if (plain) v[size_t(id)] = 'x';
    }
    return v;
}

std::vector<uint32_t> induction_probe(const std::vector<uint32_t>& vocab, int block_size, uint64_t seed) {
    if (vocab.empty() || block_size < 1) throw Error("an induction probe needs a vocabulary and a block size");
    std::vector<uint32_t> ids = probe_alphabet(vocab);
    const size_t V = ids.size(), n = size_t(std::max(1, std::min(25, block_size / 2)));
    Rng rng(seed);
    std::vector<uint32_t> half(n);
    if (V >= n) {  // distinct: every repeated character has one earlier copy to look after
        for (size_t k = 0; k < n; k++) {  // a partial Fisher-Yates shuffle
            std::swap(ids[k], ids[k + size_t(rng.below(V - k))]);
            half[k] = ids[k];
        }
    } else {
        for (auto& t : half) t = ids[size_t(rng.below(V))];
    }
    std::vector<uint32_t> probe = half;
    probe.insert(probe.end(), half.begin(), half.end());
    probe.resize(std::min(probe.size(), size_t(block_size)));  // a block of 1: one character, nothing repeats
    return probe;
}

std::string head_label(const HeadScores& s, const HeadSummary& text_summary) {
    if (s.induction >= k_induction_label) return "induction";
    if (s.previous >= k_role_label) return "previous character";
    if (s.current >= k_role_label) return "current character";
    if (s.first >= k_role_label) return "first character";
    if (s.duplicate >= k_role_label) return "duplicate";
    return text_summary.label == "uniform" ? "uniform" : "";
}

// Head (l, h)'s induction score averaged over the probes that give one (NaN when none does: a block of 1 or 2).
static double mean_induction(const std::vector<ProbeSnapshot>& views, const std::vector<std::vector<uint32_t>>& tokens,
                             int NH, int l, int h) {
    double sum = 0;
    int n = 0;
    for (size_t k = 0; k < views.size(); k++) {
        const auto& x = tokens[k];
        double v = induction_score(snapshot_head(views[k], int(x.size()), NH, l, h), x);
        if (std::isfinite(v)) sum += v, n++;
    }
    return n > 0 ? sum / n : std::nan("");
}

std::vector<HeadScores> score_heads(const ProbeSnapshot& text_view, const std::vector<uint32_t>& text,
                                    const std::vector<ProbeSnapshot>& induction_views,
                                    const std::vector<std::vector<uint32_t>>& induction_tokens, int L, int NH,
                                    bool causal) {
    std::vector<HeadScores> out(size_t(L) * size_t(NH));
    int P = int(text.size());
    for (int l = 0; l < L; l++)
        for (int h = 0; h < NH; h++) {
            HeadScores& s = out[size_t(l) * size_t(NH) + size_t(h)];
            std::vector<float> a = snapshot_head(text_view, P, NH, l, h);
            s.previous = previous_score(a, P);
            s.duplicate = duplicate_score(a, text);
            s.first = first_score(a, P);
            s.current = current_score(a, P);
            HeadSummary summary = summarize_head(a, P, causal);
            s.entropy = summary.entropy;
            s.induction = mean_induction(induction_views, induction_tokens, NH, l, h);
            s.label = head_label(s, summary);
        }
    return out;
}

std::vector<HeadScores> score_heads(const AttentionOf& attention_of, const std::vector<uint32_t>& text,
                                    const ProbeSnapshot* text_view, const std::vector<uint32_t>& vocab,
                                    int block_size, int L, int NH, bool causal) {
    if (L < 1 || NH < 1) throw Error("this model has no attention: there are no heads to score");
    ProbeSnapshot computed;
    if (!text_view) computed = attention_of(text), text_view = &computed;
    std::vector<ProbeSnapshot> views;
    std::vector<std::vector<uint32_t>> probes;
    for (int k = 0; k < k_induction_probes; k++) {
        probes.push_back(induction_probe(vocab, block_size, k_induction_probe_seed + uint64_t(k)));
        views.push_back(attention_of(probes.back()));
    }
    return score_heads(*text_view, text, views, probes, L, NH, causal);
}

}  // namespace attn
