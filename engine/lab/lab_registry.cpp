// The self-attention lab's demos: names, one-line titles and the two- or three-sentence explanations.
#include "lab/lab_registry.h"

namespace attn::lab {

const std::vector<DemoInfo>& demos() {
    static const std::vector<DemoInfo> list = {
        {"matmul", "The trick: a weighted sum of rows is a matrix multiply",
         "Row i of c = a @ b is a weighted sum of the rows of b, with the weights in row i of a. With a lower "
         "triangle of ones each row sums only the past and present; divide each row of a by its sum and c "
         "becomes a running average. That is the whole mathematical trick behind self-attention."},
        {"average", "Three ways to average the past",
         "Each token should see a summary of the tokens before it: here the plainest one, their average. A loop "
         "over the past (xbow), a multiply by the row-normalised lower triangle, and masked_fill(-inf) followed "
         "by softmax all give the same numbers. The softmax version is the one attention uses, because then the "
         "zeros can become learned, data-dependent affinities: version 4, the lecture's own single head, shows them."},
        {"softmax", "Softmax sharpens as scores grow",
         "Softmax turns scores into weights that sum to one. Multiply the same scores by a larger number and the "
         "weights tend to one-hot: all attention goes to the single largest score. That is why attention scores "
         "are scaled down before the softmax, especially at initialisation."},
        {"scaling", "Why attention divides by sqrt(head_size)",
         "With unit-variance queries and keys, each score q.k is a sum of head_size products, so its variance "
         "grows like head_size. Multiplying by 1/sqrt(head_size) brings it back to about 1, so the softmax "
         "stays diffuse instead of collapsing onto one token."},
        {"encoder", "Encoder versus decoder: one mask of difference",
         "Remove the causal mask and every position can attend to the future, including the very next character, "
         "which is the one it must predict. The training loss falls far below the decoder's because the model "
         "learns to copy the answer, and its samples get worse: when generating, the future is not there to copy."},
        {"position", "Attention has no notion of space",
         "Attention acts on a set of vectors: without position embeddings and without a mask, shuffling the "
         "input tokens just shuffles the outputs in the same way. Add position embeddings and the same tokens "
         "in a different order give genuinely different results, which is why the model adds them."},
        {"batches", "Batch elements never talk to each other",
         "Every sequence in a batch is processed independently; the batch only exists so the hardware has more "
         "work to do at once. Changing the tokens of one element leaves every other element's attention weights "
         "and outputs bit-identical."},
        {"graph", "Attention is communication on a directed graph",
         "Think of the T positions as nodes. The mask decides which nodes have an edge into which: in a decoder, "
         "node t hears from itself and every node before it, never from the future; an encoder connects them all. "
         "Each node sends a value along its edges, and each receiving node takes a weighted sum of what arrives, "
         "with weights from softmax(q . k / sqrt(head_size)) over its incoming edges: data-dependent, summing to "
         "one. Attention is this message passing; nothing about it needs the nodes to be in order. Here queries, keys "
         "and values all come from the same nodes (self-attention); in cross-attention the keys and values come "
         "from another set of nodes, such as an encoder's."},
    };
    return list;
}

const DemoInfo* find_demo(const std::string& name) {
    for (const auto& d : demos())
        if (d.name == name) return &d;
    return nullptr;
}

std::string demo_names() {
    std::string s;
    for (const auto& d : demos()) s += (s.empty() ? "" : ", ") + d.name;
    return s;
}

}  // namespace attn::lab
