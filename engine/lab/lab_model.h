// Lab demos 5-8 on models: encoder versus decoder (training), position (permutation), batches (independence),
// graph (attention as message passing along the mask's edges).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lab/lab_gpu.h"
#include "vk/check.h"
#include "train/dataset.h"

namespace attn::lab {

// --- 5. encoder: the single-head model trained with and without the causal mask ---
constexpr int k_encoder_max_steps = 100000;
struct EncoderDemoInput {
    int steps = 500;       // AdamW steps for each model, same seed and batches
    int tail = 50;         // the reported train loss is the mean over the last `tail` steps
    uint64_t seed = 1337;
    int sample_chars = 200;
};
struct EncoderRun {
    bool causal = true;
    double train_loss = 0;  // mean batch loss over the last `tail` steps
    Matrix att;             // (T, T) attention of the last step's display element (the heatmap)
    std::string sample;     // generated from a newline, seeded
};
struct EncoderDemo {
    int steps = 0, tail = 0;
    EncoderRun decoder, encoder;
};
// Called after every training step with (done, total); returning false stops the demo by throwing Stopped.
using EncoderProgress = std::function<bool(int done, int total)>;
struct Stopped : Error {
    Stopped() : Error("lab encoder: stopped") {}
};
// The two training runs take seconds: `keep_going` reports progress and lets a window's worker stop them.
// Throws Error (what to change) when `in` is out of range; run_encoder_demo checks it first too.
void check_encoder_input(const EncoderDemoInput& in);
// The demo's conclusion, one sentence: how far the encoder's loss fell below the decoder's, or that it has not yet
// ("... train longer").
std::string encoder_verdict(const EncoderDemo& d);
// Throws Error when `data` is too short for the demo's model (the single-head preset's blocks); run_encoder_demo too.
void check_encoder_corpus(const Dataset& data);
EncoderDemo run_encoder_demo(Context& ctx, const Dataset& data, const EncoderDemoInput& in,
                             const EncoderProgress& keep_going = {});

// --- the tiny random single-head model of demos 6-8: embedding -> qkv -> attention ---
struct TinyHeadInput {
    int C = 32, HS = 16;   // embedding width, head size
    bool use_pos = true;
    bool causal = true;
    uint64_t seed = 1337;  // parameters: wte, wpe N(0,1), qkv U(+-1/sqrt(C)) like PyTorch
};
struct TinyHeadOutput {
    std::vector<float> att;  // (B, T, T)
    std::vector<float> out;  // (B, T, HS)
    std::vector<float> v;    // (B, T, HS) the values, the third part of the qkv projection
};
// Runs the model on B sequences of T byte tokens (each string must have T characters, codes < 128).
TinyHeadOutput run_tiny_head(Context& ctx, KernelCache& kc, const TinyHeadInput& m, const std::vector<std::string>& seqs);

// --- 6. position: permutation equivariance without position embeddings ---
struct PositionDemoInput {
    std::string text = "to be or";  // T = its length
    uint64_t perm_seed = 7;          // the shuffle
    bool use_pos = false;
    uint64_t seed = 1337;            // model parameters
};
struct PositionDemo {
    bool use_pos = false;
    std::string text, permuted;  // permuted[t] = text[perm[t]]
    std::vector<int> perm;       // (T,)
    Matrix att, att_perm;        // (T, T) heatmaps of the original and the permuted input
    float max_diff = 0;          // largest |difference| of outputs and weights after undoing the permutation
};
PositionDemo run_position_demo(Context& ctx, KernelCache& kc, const PositionDemoInput& in);

// --- 7. batches: one element's tokens change, the others' results stay bit-identical ---
struct BatchesDemoInput {
    std::vector<std::string> texts{"to be or", "not to b", "e: that ", "is the q"};  // (B,) each of length T
    int changed = 2;                  // which element gets new tokens
    std::string replacement = "uestion.";
    uint64_t seed = 1337;
};
struct BatchesDemo {
    std::vector<std::string> before, after;  // (B,) the batches' texts
    int changed = 0;
    std::vector<bool> att_changed, out_changed;  // (B,) any bit of that element's weights / outputs differs
    Matrix att_before, att_after;                // (T, T) the changed element's heatmaps
    // the replacement is the element's own text: nothing was changed, so nothing can differ
    bool unchanged() const { return size_t(changed) < before.size() && before[size_t(changed)] == after[size_t(changed)]; }
};
BatchesDemo run_batches_demo(Context& ctx, KernelCache& kc, const BatchesDemoInput& in);

// --- 8. graph: attention is communication on a directed graph ---
// The T positions are the nodes; the mask decides the edges (decoder: j -> t for every j <= t; encoder: all j); each
// node's output is the sum of the values of the nodes with an edge into it, weighted by softmax(q_t . k_j / sqrt(HS))
// over those edges. The tiny random head of demos 6 and 7 computes it on the GPU; the CPU checks the sum.
struct GraphDemoInput {
    std::string text = "to be or";  // the nodes, one character each: 2..64 ASCII characters
    bool causal = true;             // the decoder's mask
    uint64_t seed = 1337;           // model parameters
};
struct GraphDemo {
    std::string text;
    bool causal = true;
    int head_size = 0;             // of the tiny head
    int edges = 0;                 // T (T + 1) / 2 with the mask, T * T without
    Matrix att;                    // (T, T): att(t, j) = the weight of the edge j -> t (0: no edge)
    float max_no_edge = 0;         // the largest weight where the mask has no edge (exactly 0 on every device)
    float max_sum_error = 0;       // the largest |sum of a node's incoming weights - 1|
    float max_message_error = 0;   // the largest |out_t - sum over edges j -> t of att(t, j) v_j|, the sum on the CPU
};
GraphDemo run_graph_demo(Context& ctx, KernelCache& kc, const GraphDemoInput& in);

}  // namespace attn::lab
