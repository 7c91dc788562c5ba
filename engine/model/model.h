// The lecture's models: parameter layout, PyTorch initialisation, and the recorded forward/backward/update.
#pragma once
#include <string>
#include <vector>

#include "model/config.h"
#include "vk/program.h"

namespace attn {

// Embedding N(0,1); Linear U(+-1/sqrt(fan_in)); LayerNorm 1, 0. nanoGPT: N(0, bound) for Linear and Embedding.
enum class Init { Normal, Uniform, Ones, Zeros };

struct ParamInfo {
    std::string name;        // PyTorch-style, e.g. "blocks.0.sa.qkv.weight"
    std::vector<int> shape;  // e.g. {V, C}
    size_t offset = 0;       // in floats, into the flat parameter buffer
    size_t count = 0;
    Init init = Init::Normal;
    float bound = 0;         // Init::Uniform's bound; Init::Normal's standard deviation (0: 1)
};

// Indices into Model::params_info() of one block's tensors (-1: absent).
struct BlockParams {
    int ln1_w = -1, ln1_b = -1, qkv = -1, qkv_b = -1, proj_w = -1, proj_b = -1, ln2_w = -1, ln2_b = -1;
    int fc_w = -1, fc_b = -1, fc2_w = -1, fc2_b = -1;
};

// Activations of one block, for one batch shape. A = n_head*head_size, F = ffn width.
struct BlockActs {
    Buffer ln1, ln1_stats;  // (B,T,C), (B,T,2)
    Buffer qkv;             // (B,T,3A)
    Buffer att;             // (B,NH,T,T)  softmax weights, masked entries 0 (before dropout)
    Buffer y;               // (B,T,A)     heads concatenated
    Buffer xa;              // (B,T,C)     stream after the attention residual
    Buffer ln2, ln2_stats;  // (B,T,C), (B,T,2)
    Buffer pre;             // (B,T,F)     fc before GELU (GELU only: its backward reads it)
    Buffer h;               // (B,T,F)     ReLU(fc) or GELU(fc)
    Buffer xf;              // (B,T,C)     stream after the feed-forward residual
};

constexpr size_t PARAM_ALIGN_FLOATS = 64;  // 256 bytes: the largest minStorageBufferOffsetAlignment in practice

// Where every parameter lives in the flat buffers: a pure function of the config and the vocabulary size.
struct ModelLayout {
    std::vector<ParamInfo> info;
    std::vector<BlockParams> blocks;
    int wpe = -1, lnf_w = -1, lnf_b = -1, lm_w = -1, lm_b = -1;  // lm_w 0: tied to the token embedding (nanoGPT)
    size_t flat = 0;        // floats, each tensor padded to 64
    size_t decay_end = 0;   // AdamW's weight decay applies to the floats before this (nanoGPT: the 2-D tensors)
};
ModelLayout make_layout(const Config& cfg, int vocab_size);

// Per-batch-shape activations and gradients.
struct Activations {
    // T: positions a sequence (0: the block size); a forward of fewer runs on a prefix (probe, generation).
    // forward_only: no gradients (dlogits, dres ... dpre stay empty): for forwards never followed by a backward.
    Activations(Context& ctx, const Config& cfg, int V, int B, bool host_logits, int T = 0, bool forward_only = false);
    int B, T;
    Buffer x;                      // (B,T,C) token + position embedding (bigram: unused)
    std::vector<BlockActs> blocks;
    Buffer lnf, lnf_stats;         // (B,T,C), (B,T,2)
    Buffer logits;                 // (B,T,logits_ld)
    uint32_t logits_ld = 0;        // logits' row stride: V, or V rounded up to 4 for lm_head's forward (ops/matmul.h)
    Buffer losses;                 // (B,T)
    Buffer result;                 // (4,) host-visible: mean loss, non-finite flag
    // gradients and scratch, shared by all blocks
    Buffer dlogits;                // (B,T,dlogits_ld)
    uint32_t dlogits_ld = 0;       // dlogits' row stride: V, or V rounded up to 4 for lm_head's backward (ops/matmul.h)
    bool dlogits_recorded = false; // the recorded training forward already writes dlogits (crossentropy_fused)
    Buffer dres, dres2;            // (B,T,max(C,A,F)) the stream's gradient (ping-pong without residuals)
    Buffer dln;                    // (B,T,C)  gradient at a LayerNorm's output
    Buffer dy;                     // (B,T,A)
    Buffer dqkv;                   // (B,T,3A)
    Buffer dh;                     // (B,T,F)
    Buffer dtmp;                   // (B,T,C)  dropout scratch: pre-dropout branch output, its gradient
    Buffer dpre;                   // (B,NH,T,T) attention backward scratch
    Buffer scratch;                // backward sums split over row ranges (GPUs): partial sums, see ops/reduce.h
};

class Model {
public:
    // host_grads: gradients in host-visible memory (Trainer's replicas copy them between devices).
    Model(Context& ctx, KernelCache& kc, const Config& cfg, int vocab_size, bool host_grads = false);

    const Config& config() const { return m_cfg; }
    int vocab_size() const { return m_V; }
    int n_head() const { return m_cfg.kind == ModelKind::Bigram ? 0 : m_cfg.n_head; }
    int n_layer() const { return m_cfg.kind == ModelKind::Bigram ? 0 : m_cfg.n_layer; }
    const ModelLayout& layout() const { return m_layout; }
    const std::vector<ParamInfo>& params_info() const { return m_layout.info; }
    const std::vector<BlockParams>& blocks() const { return m_layout.blocks; }
    int wte() const { return 0; }
    int wpe() const { return m_layout.wpe; }
    int lnf_w() const { return m_layout.lnf_w; }
    int lnf_b() const { return m_layout.lnf_b; }
    int lm_w() const { return m_layout.lm_w; }
    int lm_b() const { return m_layout.lm_b; }
    size_t num_params() const;                          // trainable scalars (the lecture's parameter count)
    size_t flat_size() const { return m_layout.flat; }  // floats in the flat buffers, with alignment padding
    // Parameters + gradients + AdamW moments + activations of one training batch, in bytes.
    static size_t bytes_needed(const Config& cfg, int vocab_size);

    // The switches that change no parameter shape (mask, dropout, whether updates clip); re-record programs afterwards.
    void set_switches(const Config& c) { m_cfg.causal = c.causal; m_cfg.dropout = c.dropout; m_cfg.grad_clip = c.grad_clip; }

    // PyTorch default initialisation, AdamW moments zeroed.
    void init(uint64_t seed);
    std::vector<float> read_params() const;
    void write_params(const std::vector<float>& flat);
    std::vector<float> read_grads() const;

    // Records the forward for tokens[offsets[b] + t]; with_loss adds the mean loss into act.result (and, when
    // training, dlogits: the loss's gradient, from the same softmax). `seed` holds the step's dropout key
    // (uvec2); dropout is applied only when training. heads_only: up to the last layer's attention weights (act.att
    // of every layer) and no further, for a view of the attention alone (no logits, no loss).
    void record_forward(Program& pr, Activations& act, BufferRange tokens, BufferRange offsets, const Buffer& seed,
                        bool with_loss, bool training, bool heads_only = false);
    // Records backward of the mean loss; every gradient is overwritten (no zero_grad needed).
    void record_backward(Program& pr, Activations& act, BufferRange tokens, BufferRange offsets, const Buffer& seed);
    // Records AdamW on every parameter; `hyper` holds ops::AdamWHyper, rewritten by the host each step. With
    // replicas: the gradient is the weighted mean of the R slices' gradients in `slices` ((R, flat_size), see
    // ops::adamw), not `grads`.
    void record_update(Program& pr, const Buffer& hyper, const Buffer* slices = nullptr, uint32_t replicas = 1,
                       const float* weights = nullptr);

    Buffer params, grads, adam_m, adam_v;  // flat, (flat_size,)
    Buffer norm_parts;                     // (ops::grad_norm_parts(flat_size),) the gradient norm's partial sums
    Buffer clip;                           // (4,) host-visible: the last clipped update's scale and gradient norm

private:
    BufferRange p(int i) const;  // parameter i as a range of `params`
    BufferRange g(int i) const;  // its gradient
    BufferRange ln_b(int i) const;   // a LayerNorm's bias, zeros when it has none (nanoGPT's bias=False)
    BufferRange ln_db(int i) const;  // where its gradient goes (a scratch buffer when it has none)
    // The stream (B,T,width) entering block l, and leaving it.
    const Buffer& block_input(const Activations& a, int l) const;
    const Buffer& block_output(const Activations& a, int l) const;
    Context& m_ctx;
    KernelCache& m_kc;
    Config m_cfg;
    int m_V;
    ModelLayout m_layout;
    Buffer m_dummy;  // bound where a kernel's optional input is unused
    Buffer m_zeros, m_discard;  // (C,) LayerNorm without bias: a zero bias, and its unread gradient
};

}  // namespace attn
