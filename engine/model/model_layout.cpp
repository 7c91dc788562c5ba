// Where every parameter lives in the flat buffers, with PyTorch's initialisation: a pure function of the config.
#include <cmath>

#include "model/model.h"

namespace attn {

ModelLayout make_layout(const Config& cfg, int V) {
    ModelLayout L;
    auto add = [&](std::string name, std::vector<int> shape, Init init, float bound = 0) {
        ParamInfo pi{std::move(name), std::move(shape), L.flat, 1, init, bound};
        for (int d : pi.shape) pi.count *= size_t(d);
        L.flat += (pi.count + PARAM_ALIGN_FLOATS - 1) / PARAM_ALIGN_FLOATS * PARAM_ALIGN_FLOATS;
        L.info.push_back(pi);
        return int(L.info.size()) - 1;
    };
    auto lin = [](int fan_in) { return 1.0f / std::sqrt(float(fan_in)); };
    int T = cfg.block_size, C = cfg.n_embd, A = cfg.attn_dim(), F = cfg.ffn_dim();
    if (cfg.kind == ModelKind::Bigram) {
        add("token_embedding_table.weight", {V, V}, Init::Normal);
        return L;
    }
    add("token_embedding_table.weight", {V, C}, Init::Normal);
    if (cfg.use_pos) L.wpe = add("position_embedding_table.weight", {T, C}, Init::Normal);
    for (int l = 0; l < cfg.n_layer; l++) {
        std::string pre = "blocks." + std::to_string(l) + ".";
        BlockParams b;
        if (cfg.layernorm) {
            b.ln1_w = add(pre + "ln1.weight", {C}, Init::Ones);
            b.ln1_b = add(pre + "ln1.bias", {C}, Init::Zeros);
        }
        // every head's query, key, value Linear(C, HS, bias=False), stacked as q | k | v, heads within each
        b.qkv = add(pre + "sa.qkv.weight", {3 * A, C}, Init::Uniform, lin(C));
        if (cfg.residual) {
            b.proj_w = add(pre + "sa.proj.weight", {C, A}, Init::Uniform, lin(A));
            b.proj_b = add(pre + "sa.proj.bias", {C}, Init::Uniform, lin(A));
        }
        if (cfg.ffn) {
            if (cfg.layernorm) {
                b.ln2_w = add(pre + "ln2.weight", {C}, Init::Ones);
                b.ln2_b = add(pre + "ln2.bias", {C}, Init::Zeros);
            }
            b.fc_w = add(pre + "ffwd.fc.weight", {F, C}, Init::Uniform, lin(C));
            b.fc_b = add(pre + "ffwd.fc.bias", {F}, Init::Uniform, lin(C));
            if (cfg.residual) {
                b.fc2_w = add(pre + "ffwd.proj.weight", {C, F}, Init::Uniform, lin(F));
                b.fc2_b = add(pre + "ffwd.proj.bias", {C}, Init::Uniform, lin(F));
            }
        }
        L.blocks.push_back(b);
    }
    if (cfg.layernorm) {
        L.lnf_w = add("ln_f.weight", {C}, Init::Ones);
        L.lnf_b = add("ln_f.bias", {C}, Init::Zeros);
    }
    int D = cfg.lm_head_width();
    L.lm_w = add("lm_head.weight", {V, D}, Init::Uniform, lin(D));
    L.lm_b = add("lm_head.bias", {V}, Init::Uniform, lin(D));
    return L;
}

}  // namespace attn
