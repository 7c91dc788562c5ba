// Head ablation by weight surgery: a head is knocked out by changing the weights so that its output y_h (the head's
// hs columns of the concatenated heads, (B, T, A)) is exactly zero, or exactly its mean over validation batches, at
// every position, and the model then runs on the training kernels unchanged. Zero: the head's value rows (and value
// bias) are zeroed, so y_h = att @ V_h = 0 whatever it attends to. Mean: the same, and the mean m_h (hs,) is put back
// as a constant: in the value bias when the model has one (att's rows sum to 1, so att @ 1 m_h^T = m_h), else folded
// into the bias of the first linear layer that reads the heads (the output projection, the feed-forward's first layer,
// or lm_head): b += W[:, h*hs:(h+1)*hs] @ m_h. A model with no such bias cannot be mean-ablated (the error says so).
#pragma once
#include <string>
#include <vector>

#include "model/model.h"

namespace attn {

struct HeadId {
    int layer = 0, head = 0;  // from 0 (the app shows and takes them from 1)
    bool operator==(const HeadId& o) const { return layer == o.layer && head == o.head; }
};

// "L:H[,L:H...]" with layers and heads from 1, as the app numbers them. Throws attn::Error with one line: an empty
// list, a malformed item, a head out of range, a model without attention (n_layer or n_head 0).
std::vector<HeadId> parse_head_list(const std::string& text, int n_layer, int n_head);
std::string head_list_text(const std::vector<HeadId>& heads);  // back to "L1 H2, L2 H1"

enum class AblationMode { Zero, Mean };
const char* ablation_mode_name(AblationMode m);  // "zero", "mean"

// `flat` (the model's flat parameters) with `heads` knocked out. means: each block's mean head output (L, A)
// (Trainer::FixedEval::head_means), needed for Mean only. Throws attn::Error when Mean has nowhere to go.
std::vector<float> ablate_weights(std::vector<float> flat, const ModelLayout& layout, const Config& cfg,
                                  const std::vector<HeadId>& heads, AblationMode mode,
                                  const std::vector<double>& means = {});

// The in-context learning score of a loss-by-position curve (T,): the mean loss at the positions around T/10
// (within T/20 of it) minus the mean loss over the last tenth of the block; positive when later characters are
// predicted better (Olsson et al. 2022: the loss at token 500 against token 50 of 512, scaled to the block).
double icl_score(const std::vector<double>& by_position);

}  // namespace attn
