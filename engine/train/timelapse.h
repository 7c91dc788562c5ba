// The attention time-lapse: what the model makes of one probe text as training goes on. A snapshot holds, at one
// step, every layer x head's attention on the probe, the loss on each of its characters and the top-5 predictions
// at each position; the TimeLapse keeps snapshots at steps dense early and sparse later, within a memory budget.
// Pure CPU data: Trainer::probe computes a snapshot on the GPU, Session records them, checkpoints carry them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

constexpr int k_probe_top = 5;  // predictions kept per position

// One probe at one step. P = probe length (<= block_size), L = layers, NH = heads.
struct ProbeSnapshot {
    int step = 0;
    std::vector<uint16_t> att;      // (L, NH, P, P) IEEE fp16: row i = what position i attends to; masked entries 0
    std::vector<float> char_loss;   // (P-1,) -log p(probe[t+1] | probe[0..t]): the surprise at each next character
    std::vector<int32_t> top_ids;   // (P, 5) the most likely next tokens after position t, most likely first
    std::vector<float> top_p;       // (P, 5) their probabilities
    size_t bytes() const {
        return att.size() * 2 + char_loss.size() * 4 + top_ids.size() * 4 + top_p.size() * 4 + sizeof(ProbeSnapshot);
    }
    float att_at(int P, int NH, int l, int h, int i, int j) const;  // one weight as float
    double mean_loss() const;  // the probe's cross-entropy: the mean of char_loss
};

// IEEE 754 half precision, round to nearest even (the attention weights of a snapshot; their range is [0, 1]).
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

// Steps at which a run records a snapshot besides its evaluations: 0, 1, 2, 5, 10, 20, 50, 100, 200, 500, ...
bool timelapse_due(int step);

class TimeLapse {
public:
    static constexpr size_t k_default_budget = size_t(64) << 20;  // bytes (--history-mib)

    // A new, empty history for `tokens` (P,) on a model of n_layer x n_head (0 x 0: the bigram, losses only).
    void reset(std::vector<uint32_t> tokens, std::string text, int n_layer, int n_head);
    const std::vector<uint32_t>& tokens() const { return m_tokens; }
    const std::string& text() const { return m_text; }  // the probe as recorded (characters the corpus knows)
    int length() const { return int(m_tokens.size()); }
    int n_layer() const { return m_layers; }
    int n_head() const { return m_heads; }

    // Adds a snapshot (replacing one of the same step), keeping the list in step order, then thins to the budget.
    void add(ProbeSnapshot s);
    // Drops the snapshots after `step` (a revert to an earlier state).
    void truncate_after(int step);
    void clear() { m_snaps.clear(); }

    // Thinning: while over budget, the interior snapshot whose neighbours are closest on a log(1 + step) axis goes,
    // so the first and last stay and the spacing (dense early, sparse later) keeps its shape.
    void set_budget(size_t bytes);
    size_t budget() const { return m_budget; }
    size_t bytes() const;
    int thinned() const { return m_thinned; }  // snapshots dropped to stay within the budget

    const std::vector<ProbeSnapshot>& snapshots() const { return m_snaps; }
    bool empty() const { return m_snaps.empty(); }
    bool has_step(int step) const;
    // The recorded snapshot whose step is nearest `step` (ties: the earlier); null when empty.
    const ProbeSnapshot* nearest(int step) const;

private:
    void thin();
    std::vector<uint32_t> m_tokens;
    std::string m_text;
    int m_layers = 0, m_heads = 0;
    std::vector<ProbeSnapshot> m_snaps;
    size_t m_budget = k_default_budget;
    int m_thinned = 0;
};

// What one head does on the probe, in numbers and, when they are clear, in words.
struct HeadSummary {
    double entropy = 0;        // mean over rows of -sum_j p log p (nats): 0 = one character, log(i+1) = uniform
    double uniformity = 0;     // mean over rows i >= 1 of entropy / log(i + 1) (causal) or / log(P): 1 = uniform
    double mean_distance = 0;  // mean over rows of sum_j p_ij |i - j|: 1 = the previous character
    double previous = 0, current = 0, first = 0;  // mean weight on j = i-1, j = i, j = 0 (rows i >= 1)
    std::string label;         // "previous character", "current character", "first character", "uniform" or ""
};
// att (P, P) row-major; causal: row i attends to j <= i (the rest is 0). The labels' thresholds
// (docs/timelapse.md): a weight over 0.5 on average on one relative position, or a uniformity over 0.9.
HeadSummary summarize_head(const std::vector<float>& att, int P, bool causal);
// Head (l, h) of a snapshot as floats (P, P).
std::vector<float> snapshot_head(const ProbeSnapshot& s, int P, int NH, int l, int h);
// Mean attention entropy over layers, heads and rows (nats); 0 for a model without attention.
double mean_attention_entropy(const ProbeSnapshot& s, int P, int L, int NH);

}  // namespace attn
