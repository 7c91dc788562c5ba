// Head scores: what each attention head does, as TransformerLens' head_detector.py measures it. A detection
// pattern D (P, P) marks where a head of a role would look; its score is the share of the head's attention that
// lands there, sum(A ⊙ D) / sum(A) over the rows that have somewhere to look (i >= 1, D's row not empty), so a
// perfect head of the role scores 1. Pure CPU, on the attention maps a ProbeSnapshot holds (train/timelapse.h).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "train/timelapse.h"

namespace attn {

// The labels' thresholds (docs/induction.md): induction first (the rarest and the one a learner looks for), then
// the fixed positions, then repeated characters; summarize_head's "uniform" when none holds.
constexpr double k_induction_label = 0.4;  // induction score at or over this: "induction"
constexpr double k_role_label = 0.5;       // previous / current / first / duplicate score at or over this

// One head's scores; att (P, P) row-major, causal (row i attends to j <= i), tokens (P,).
// previous: D[i, i-1]; current: D[i, i]; first: D[i, 0] (rows i >= 1).
double previous_score(const std::vector<float>& att, int P);
double current_score(const std::vector<float>& att, int P);
double first_score(const std::vector<float>& att, int P);
// duplicate: D[i, j] = 1 where x[j] = x[i], j < i (rows whose character came before).
double duplicate_score(const std::vector<float>& att, const std::vector<uint32_t>& tokens);
// induction: D[i, j] = 1 where x[j-1] = x[i], 1 <= j < i: the character after an earlier copy of the current one
// (rows whose character came before, not last: the paper's prefix-matching score on a repeated sequence).
double induction_score(const std::vector<float>& att, const std::vector<uint32_t>& tokens);
// The share of att's rows i >= 1 that lands where pattern(i, j) holds, over the rows where it holds somewhere
// (j <= i); NaN when no row has somewhere to look (a text without a repeated character has no duplicate score).
double pattern_score(const std::vector<float>& att, int P, const std::function<bool(int i, int j)>& pattern);

// The induction probe: n = min(25, T/2) random characters of the vocabulary (distinct when it has n), then the same
// n again (the paper's 25 random tokens repeated, shortened to fit a block of T); one seed, one probe. (2n,) ids.
// vocab: id -> code point. Spaces, line breaks and other control characters are left out while two others remain:
// in most texts they end a word or a line that what follows does not repeat, and a model learns not to look back
// across them, which would hide its induction heads from a probe that has them in the middle.
std::vector<uint32_t> induction_probe(const std::vector<uint32_t>& vocab, int block_size, uint64_t seed);
// The vocabulary induction_probe reads for a run of BPE tokens: each id -> 'x' where its token is no blank or
// control byte and holds at least one (a probe may draw it), else ' ' (left out, as blanks are for characters).
std::vector<uint32_t> bpe_probe_vocab(const class BpeTokenizer& tokenizer);
constexpr uint64_t k_induction_probe_seed = 5400;  // the first probe's seed; probe k has seed + k
constexpr int k_induction_probes = 4;              // probes the induction score is averaged over

struct HeadScores {
    double previous = 0, duplicate = 0, induction = 0, first = 0, current = 0;  // NaN: nowhere to look (pattern_score)
    double entropy = 0;  // on the text, nats (summarize_head)
    std::string label;   // "induction", "previous character", "current character", "first character",
                         // "duplicate", "uniform" or ""
};

// The label in words for scores, with summarize_head's for the text when no score reaches its threshold.
std::string head_label(const HeadScores& s, const HeadSummary& text_summary);

// What a model makes of a text: every head's attention (a ProbeSnapshot's att) at the weights in question.
using AttentionOf = std::function<ProbeSnapshot(const std::vector<uint32_t>& tokens)>;

// Every head's scores, (L * NH,) layer-major: previous, duplicate, first, current and the entropy on `text` (P,)
// (the time-lapse's probe or a validation line), induction averaged over k_induction_probes induction probes of
// the vocabulary (seeds k_induction_probe_seed + k). `text_view`: the text's snapshot when at hand (a recorded
// one), else null and attention_of computes it.
std::vector<HeadScores> score_heads(const AttentionOf& attention_of, const std::vector<uint32_t>& text,
                                    const ProbeSnapshot* text_view, const std::vector<uint32_t>& vocab,
                                    int block_size, int L, int NH, bool causal);
// The scores of one text view and the induction probes' views (each with its tokens), as score_heads combines them.
std::vector<HeadScores> score_heads(const ProbeSnapshot& text_view, const std::vector<uint32_t>& text,
                                    const std::vector<ProbeSnapshot>& induction_views,
                                    const std::vector<std::vector<uint32_t>>& induction_tokens, int L, int NH,
                                    bool causal);

}  // namespace attn
