// Where every parameter lives in the flat buffers, with PyTorch's initialisation: a pure function of the config.
#include <cmath>

#include "model/model.h"

namespace attn {

ModelLayout make_layout(const Config& cfg, int V) {
    ModelLayout L;
    auto add = [&](std::string name, std::vector<int> shape, Init init, float bound = 0) {
        ParamInfo pi{std::move(name), std::move(shape), 0, 1, init, bound};
        for (int d : pi.shape) pi.count *= size_t(d);
        L.info.push_back(pi);
        return int(L.info.size()) - 1;
    };
    // Offsets, once every tensor is known: nanoGPT decays only 2-D tensors, so they come first and AdamW decays the
    // floats before decay_end; the lecture's AdamW decays every parameter.
    auto place = [&] {
        for (int pass = 0; pass < 2; pass++)
            for (ParamInfo& pi : L.info) {
                if (cfg.nanogpt && (pi.shape.size() >= 2) != (pass == 0)) continue;
                if (!cfg.nanogpt && pass == 1) continue;
                pi.offset = L.flat;
                L.flat += (pi.count + PARAM_ALIGN_FLOATS - 1) / PARAM_ALIGN_FLOATS * PARAM_ALIGN_FLOATS;
                if (cfg.nanogpt && pass == 0) L.decay_end = L.flat;
            }
        if (!cfg.nanogpt) L.decay_end = L.flat;
        return L;
    };
    auto lin = [](int fan_in) { return 1.0f / std::sqrt(float(fan_in)); };
    int T = cfg.block_size, C = cfg.n_embd, A = cfg.attn_dim(), F = cfg.ffn_dim();
    if (cfg.kind == ModelKind::Bigram) {
        add("token_embedding_table.weight", {V, V}, Init::Normal);
        return place();
    }
    if (cfg.nanogpt) {  // model.py's GPT; names as its state_dict, lm_head tied to wte
        const float std0 = 0.02f, std_proj = 0.02f / std::sqrt(2.0f * float(cfg.n_layer));
        add("transformer.wte.weight", {V, C}, Init::Normal, std0);
        L.wpe = add("transformer.wpe.weight", {T, C}, Init::Normal, std0);
        auto ln = [&](const std::string& name, int& w, int& b) {
            w = add(name + ".weight", {C}, Init::Ones);
            if (cfg.bias) b = add(name + ".bias", {C}, Init::Zeros);
        };
        auto linear = [&](const std::string& name, int out, int in, float std, int& w, int& b) {
            w = add(name + ".weight", {out, in}, Init::Normal, std);
            if (cfg.bias) b = add(name + ".bias", {out}, Init::Zeros);
        };
        for (int l = 0; l < cfg.n_layer; l++) {
            std::string pre = "transformer.h." + std::to_string(l) + ".";
            BlockParams b;
            ln(pre + "ln_1", b.ln1_w, b.ln1_b);
            linear(pre + "attn.c_attn", 3 * C, C, std0, b.qkv, b.qkv_b);
            linear(pre + "attn.c_proj", C, C, std_proj, b.proj_w, b.proj_b);
            ln(pre + "ln_2", b.ln2_w, b.ln2_b);
            linear(pre + "mlp.c_fc", 4 * C, C, std0, b.fc_w, b.fc_b);
            linear(pre + "mlp.c_proj", C, 4 * C, std_proj, b.fc2_w, b.fc2_b);
            L.blocks.push_back(b);
        }
        ln("transformer.ln_f", L.lnf_w, L.lnf_b);
        L.lm_w = 0;  // tied: lm_head.weight is transformer.wte.weight
        return place();
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
    return place();
}

}  // namespace attn
