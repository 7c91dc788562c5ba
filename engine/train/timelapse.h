// The attention time-lapse: the model as it was at steps dense early and sparse later, and what it makes of a probe
// text there. At each recorded step the TimeLapse keeps the model's weights (not AdamW's moments) and a snapshot of
// the current probe's views: every layer x head's attention on it, the loss on each of its characters and the top-5
// predictions at each position. The weights are the record: a view of any other text at a recorded step is computed
// from them (Session::view_at, Session::set_probe); the snapshots are the current probe's views, cached. Weights
// are kept in fp32 while the run's expected snapshots fit the memory budget, else in bf16 (docs/timelapse.md).
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
    double mean_loss() const;  // the probe's cross-entropy: the mean of char_loss, its NaNs (no loss) left out
};

// A probe's characters the corpus has no token for stay in place: each is fed as a stand-in token (a space, or the
// vocabulary's first character without one) and its loss is NaN, "no loss" (the model never saw it; predicting it
// means nothing). The probe's text keeps the character as typed, one per position, so these tell them apart.
// The characters, one UTF-8 character per position (P,): from `text` when it holds one character per token, else
// the tokens' own (vocab: id -> code point).
std::vector<std::string> probe_chars(const std::vector<uint32_t>& tokens, const std::string& text,
                                     const std::vector<uint32_t>& vocab);
// (P,) 1 where the character typed is not the token's: a character the corpus does not have (none for BPE: vocab
// empty).
std::vector<uint8_t> probe_unknown(const std::vector<uint32_t>& tokens, const std::string& text,
                                   const std::vector<uint32_t>& vocab);
// char_loss[t-1] = NaN where position t is unknown.
void mask_unknown(ProbeSnapshot& s, const std::vector<uint8_t>& unknown);

// IEEE 754 half precision, round to nearest even (the attention weights of a snapshot; their range is [0, 1]).
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

// Steps at which a run records a snapshot besides its evaluations, ten a decade from step 10 and eight below it:
// 0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100, 120, 150, ...
bool timelapse_due(int step);
// How many steps in [0, max_iters] timelapse_due names, plus the evaluations (every eval_interval-th step and
// max_iters) that are not among them: the snapshots a run of that length records.
int timelapse_expected(int max_iters, int eval_interval);

// A recorded step's weights (the model's flat parameters, with its padding), in fp32 or bf16.
struct RecordedWeights {
    std::vector<float> f32;      // (flat,) or empty when stored as bf16
    std::vector<uint16_t> bf16;  // (flat,) bf16, round to nearest even
    bool empty() const { return f32.empty() && bf16.empty(); }
    bool is_bf16() const { return !bf16.empty(); }
    size_t size() const { return f32.empty() ? bf16.size() : f32.size(); }
    size_t bytes() const { return f32.size() * 4 + bf16.size() * 2; }
    std::vector<float> values() const;  // as fp32
    void to_bf16();
};
uint16_t float_to_bf16(float f);
float bf16_to_float(uint16_t b);

class TimeLapse {
public:
    // bytes (--history-mib): a 5000-step run of every lecture preset in fp32, and the gpt preset's 10.8 M parameters
    // at 16 snapshots in bf16
    static constexpr size_t k_default_budget = size_t(384) << 20;

    // A new, empty history for `tokens` (P,) on a model of n_layer x n_head (0 x 0: the bigram, losses only).
    void reset(std::vector<uint32_t> tokens, std::string text, int n_layer, int n_head);
    const std::vector<uint32_t>& tokens() const { return m_tokens; }
    const std::string& text() const { return m_text; }  // the probe as recorded (characters the corpus knows)
    int length() const { return int(m_tokens.size()); }
    int n_layer() const { return m_layers; }
    int n_head() const { return m_heads; }

    // Adds a snapshot and the weights it was computed from (empty: none kept, as in checkpoints from before weights
    // were recorded), replacing those of the same step, keeping the list in step order, then thins to the budget.
    // Weights are stored in bf16 once weights_bf16() is set, or when fp32 weights would not fit the budget.
    void add(ProbeSnapshot s, std::vector<float> weights = {});
    // The same with weights as stored (a checkpoint's; bf16 ones make every kept weight bf16).
    void add(ProbeSnapshot s, RecordedWeights weights);
    // The current probe's views replaced by another probe's, one per recorded step (same steps, same order): the
    // weights stay.
    void set_views(std::vector<uint32_t> tokens, std::string text, std::vector<ProbeSnapshot> views);
    // Drops the snapshots after `step` (a revert to an earlier state).
    void truncate_after(int step);
    void clear() { m_snaps.clear(); m_weights.clear(); }

    // The weights recorded with snapshot i of snapshots(), empty when none were kept.
    const RecordedWeights& weights(size_t i) const { return m_weights[i]; }
    // Whether every snapshot has its weights (false for a history from before weights were kept, and when empty).
    bool has_weights() const;
    // bf16 storage: set when the run's expected snapshots would not fit the budget in fp32 (plan), or when they did
    // not; every kept weight is then bf16.
    bool weights_bf16() const { return m_bf16; }
    // Chooses the storage before a run records: fp32 when `expected` snapshots of `params` weights fit the budget.
    void plan(size_t params, int expected);
    size_t weights_bytes() const;

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
    std::vector<RecordedWeights> m_weights;  // m_weights[i]: snapshot i's step; empty when not kept
    bool m_bf16 = false;
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
