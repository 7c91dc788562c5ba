// The lecture's models: parameter layout, PyTorch initialisation, and the recorded forward/backward/update.
#pragma once
#include <string>
#include <vector>

#include "model/config.h"
#include "vk/program.h"

namespace attn {

struct ParamInfo {
    std::string name;        // e.g. "lm_head.weight"
    std::vector<int> shape;  // PyTorch's shape, e.g. {V, C}
    size_t offset = 0;       // in floats, into the flat parameter buffer
    size_t count = 0;
    float init_bound = 0;    // Linear: U(-b, b) with b = 1/sqrt(fan_in); 0 means Embedding's N(0, 1)
};

// Per-batch-shape activations and their gradients. Shapes use B, T, C, HS, V.
struct Activations {
    Activations(Context& ctx, const Config& cfg, int V, int B, bool host_logits);
    int B, T;
    Buffer x;       // (B, T, C)        token + position embedding   (bigram: unused)
    Buffer qkv;     // (B, T, 3*HS)     q | k | v
    Buffer att;     // (B, NH, T, T)    attention weights, masked entries 0
    Buffer y;       // (B, T, HS)       attention output
    Buffer logits;  // (B, T, V)
    Buffer losses;  // (B, T)
    Buffer dlogits; // (B, T, V)
    Buffer dy;      // (B, T, HS)
    Buffer dqkv;    // (B, T, 3*HS)
    Buffer dpre;    // (B, NH, T, T)    scratch of attention_backward
    Buffer dx;      // (B, T, C)
    Buffer result;  // (4,) host-visible: mean loss, non-finite flag
};

class Model {
public:
    Model(Context& ctx, KernelCache& kc, const Config& cfg, int vocab_size);

    const Config& config() const { return m_cfg; }
    int vocab_size() const { return m_V; }
    int n_head() const { return 1; }
    const std::vector<ParamInfo>& params_info() const { return m_info; }
    size_t num_params() const;           // trainable scalars (the lecture's parameter count)
    size_t flat_size() const { return m_flat; }  // floats in the flat buffers, with alignment padding
    size_t bytes_needed(int batch_size) const;   // parameters + optimizer + activations, for memory checks

    // PyTorch default initialisation (Embedding N(0,1), Linear U(+-1/sqrt(fan_in))), AdamW moments zeroed.
    void init(uint64_t seed);
    std::vector<float> read_params() const;
    void write_params(const std::vector<float>& flat);
    std::vector<float> read_grads() const;

    // Records forward (and the mean loss into act.result when with_loss) for tokens[offsets[b] + t].
    void record_forward(Program& pr, Activations& act, BufferRange tokens, BufferRange offsets, bool with_loss);
    // Records backward of the mean loss; every gradient is overwritten (no zero_grad needed).
    void record_backward(Program& pr, Activations& act, BufferRange tokens, BufferRange offsets);
    // Records AdamW on every parameter; `hyper` holds ops::AdamWHyper, rewritten by the host each step.
    void record_update(Program& pr, const Buffer& hyper);

    Buffer params, grads, adam_m, adam_v;  // flat, (flat_size,)

private:
    BufferRange p(size_t i) const;   // parameter i as a range of `params`
    BufferRange g(size_t i) const;   // its gradient
    Context& m_ctx;
    KernelCache& m_kc;
    Config m_cfg;
    int m_V;
    std::vector<ParamInfo> m_info;
    size_t m_flat = 0;
    Buffer m_dummy;  // bound where a kernel's optional input is unused
};

}  // namespace attn
