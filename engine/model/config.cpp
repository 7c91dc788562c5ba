// Presets (the lecture's settings) and validation of every hyperparameter with a message that says what to do.
#include "model/config.h"

#include <cmath>
#include <cstdio>

namespace attn {

std::vector<std::string> Config::preset_names() {
    return {"bigram", "single-head", "multi-head", "feed-forward", "residual", "layernorm", "gpt", "induction",
            "nanogpt-char", "nanogpt-cpu"};
}

bool Config::apply_preset(const std::string& name) {
    Config d;  // fresh defaults, keeping the seed and the sampling settings a user chose
    d.temperature = temperature;
    d.top_k = top_k;
    d.sample_chars = sample_chars;
    d.seed = seed;
    // the lecture's stages, each adding one thing to the previous; the head size derived as the lecture's code does
    // (head_size 0: Head(n_embd) for the single head, MultiHeadAttention(4, n_embd // 4)), so --n-embd keeps it whole
    if (name == "bigram") {
        d.kind = ModelKind::Bigram;
        d.lr = 1e-2f; d.max_iters = 3000; d.eval_interval = 300;  // bigram.py
    } else if (name == "single-head") {
        d.n_head = 1; d.head_size = 0;
    } else if (name == "multi-head") {
        d.n_head = 4; d.head_size = 0;
    } else if (name == "feed-forward") {
        d.n_head = 4; d.head_size = 0; d.ffn = true;
    } else if (name == "residual") {
        d.n_head = 4; d.head_size = 0; d.ffn = true; d.residual = true; d.n_layer = 3;
    } else if (name == "layernorm") {
        d.n_head = 4; d.head_size = 0; d.ffn = true; d.residual = true; d.n_layer = 3; d.layernorm = true;
    } else if (name == "gpt") {
        d.n_head = 6; d.head_size = 0; d.ffn = true; d.residual = true; d.n_layer = 6; d.layernorm = true;
        d.n_embd = 384; d.block_size = 256; d.batch_size = 64; d.dropout = 0.2f; d.lr = 3e-4f;
    } else if (name == "induction") {  // attention only, two layers: the smallest model an induction head forms in
        d.n_head = 4; d.head_size = 0; d.n_layer = 2; d.n_embd = 64; d.block_size = 64; d.residual = true;
        // 3000 steps hold the plateau, the drop and what follows (docs/induction.md); an evaluation every 250 dates it
        d.lr = 1e-3f; d.max_iters = 3000; d.eval_interval = 250; d.eval_iters = 50;
    } else if (name == "nanogpt-char" || name == "nanogpt-cpu") {  // nanoGPT's GPT with its training recipe
        d.nanogpt = true; d.bias = false; d.gelu = true;
        d.ffn = true; d.residual = true; d.layernorm = true; d.head_size = 0;
        d.weight_decay = 0.1f; d.beta2 = 0.99f; d.grad_clip = 1.0f;
        if (name == "nanogpt-char") {  // config/train_shakespeare_char.py
            d.n_layer = 6; d.n_head = 6; d.n_embd = 384; d.block_size = 256; d.batch_size = 64; d.dropout = 0.2f;
            d.lr = 1e-3f; d.max_iters = 5000; d.lr_decay_iters = 5000; d.min_lr = 1e-4f; d.warmup_iters = 100;
            d.eval_interval = 250;
        } else {  // the CPU recipe of nanoGPT's README, on top of train_shakespeare_char.py
            d.n_layer = 4; d.n_head = 4; d.n_embd = 128; d.block_size = 64; d.batch_size = 12; d.dropout = 0.0f;
            d.lr = 1e-3f; d.max_iters = 2000; d.lr_decay_iters = 2000; d.min_lr = 1e-4f; d.warmup_iters = 100;
            d.eval_interval = 250; d.eval_iters = 20;
        }
    } else {
        return false;
    }
    d.preset = name;
    *this = d;
    return true;
}

bool Config::differs_from_preset() const {
    Config base = *this;
    if (!base.apply_preset(preset)) return true;
    if (kind == ModelKind::Bigram && base.kind == ModelKind::Bigram) return block_size != base.block_size;
    return kind != base.kind || block_size != base.block_size || n_embd != base.n_embd || n_head != base.n_head ||
           hs() != base.hs() || n_layer != base.n_layer || ffn != base.ffn || residual != base.residual ||
           layernorm != base.layernorm || use_pos != base.use_pos || dropout != base.dropout || causal != base.causal ||
           (ffn && gelu != base.gelu) || (ffn && gelu && gelu_tanh != base.gelu_tanh) || nanogpt != base.nanogpt ||
           (nanogpt && bias != base.bias);
}

std::string Config::differences_from(const Config& o) const {
    std::string out;
    auto item = [&](bool differs, const std::string& text) {
        if (!differs) return;
        if (!out.empty()) out += ", ";
        out += text;
    };
    auto num = [](double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", v);
        return std::string(buf);
    };
    item(preset != o.preset, preset);
    item(block_size != o.block_size, "block " + std::to_string(block_size));
    item(n_embd != o.n_embd, "n_embd " + std::to_string(n_embd));
    item(n_head != o.n_head, std::to_string(n_head) + " heads");
    item(hs() != o.hs() && n_head == o.n_head, "head size " + std::to_string(hs()));
    item(n_layer != o.n_layer, std::to_string(n_layer) + " layers");
    item(nanogpt != o.nanogpt, nanogpt ? "nanoGPT's GPT" : "the lecture's model");
    item(nanogpt && bias != o.bias, bias ? "bias" : "no bias");
    item(ffn != o.ffn, ffn ? "ffn" : "no ffn");
    item(gelu != o.gelu && ffn, gelu ? (gelu_tanh ? "GELU (tanh)" : "GELU") : "ReLU");
    item(gelu && o.gelu && gelu_tanh != o.gelu_tanh && ffn, gelu_tanh ? "GELU (tanh)" : "GELU (exact)");
    item(residual != o.residual, residual ? "residual" : "no residual");
    item(layernorm != o.layernorm, layernorm ? "layernorm" : "no layernorm");
    item(use_pos != o.use_pos, use_pos ? "positions" : "no positions");
    item(causal != o.causal, causal ? "causal mask" : "no mask");
    item(dropout != o.dropout, "dropout " + num(dropout));
    item(seed != o.seed, "seed " + std::to_string(seed));
    item(lr != o.lr, "lr " + num(lr));
    item(warmup_iters != o.warmup_iters, "warm-up " + std::to_string(warmup_iters));
    item(lr_decay_iters != o.lr_decay_iters || min_lr != o.min_lr,
         "decay to " + num(min_lr) + " at " + std::to_string(lr_decay_iters));
    item(weight_decay != o.weight_decay, "weight decay " + num(weight_decay));
    item(beta2 != o.beta2, "beta2 " + num(beta2));
    item(grad_clip != o.grad_clip, grad_clip > 0 ? "clip " + num(grad_clip) : "no clipping");
    item(batch_size != o.batch_size, "batch " + std::to_string(batch_size));
    item(max_iters != o.max_iters, std::to_string(max_iters) + " iters");
    return out;
}

double Config::lecture_val_loss(const std::string& preset) {
    if (preset == "bigram") return 2.5;
    if (preset == "single-head") return 2.4;
    if (preset == "multi-head") return 2.28;
    if (preset == "feed-forward") return 2.24;
    if (preset == "residual") return 2.08;
    if (preset == "layernorm") return 2.06;
    if (preset == "gpt") return 1.48;
    if (preset == "nanogpt-char") return 1.47;  // nanoGPT's README: 1.4697 after 5000 iterations
    if (preset == "nanogpt-cpu") return 1.88;
    return 0.0;
}

const char* Config::reference_source(const std::string& preset) {
    return preset.rfind("nanogpt", 0) == 0 ? "nanoGPT" : "lecture";
}

double Config::reference_val_loss() const {
    Config own = *this;
    if (!own.apply_preset(preset)) return 0;
    bool same = kind == own.kind && nanogpt == own.nanogpt && block_size == own.block_size &&
                (kind == ModelKind::Bigram || (n_layer == own.n_layer && n_head == own.n_head && n_embd == own.n_embd &&
                                               hs() == own.hs()));
    return same ? lecture_val_loss(preset) : 0.0;
}

std::string Config::speed_note() const {
    if (kind == ModelKind::Bigram || n_embd % 4 == 0) return "";
    // the nearest multiple of 4 (below first) that the heads divide into sizes that are multiples of 4 too, when
    // their size follows n_embd / n_head
    int fast = 0;
    for (int d = 1; !fast && d <= n_embd + 4 * n_head; d++)
        for (int k : {n_embd - d, n_embd + d})
            if (!fast && k >= 4 && k % 4 == 0 && (head_size > 0 || (k % n_head == 0 && (k / n_head) % 4 == 0))) fast = k;
    char buf[200];
    std::snprintf(buf, sizeof buf, "n_embd %d is not a multiple of 4: the kernels' 4-wide paths are off and a step "
                  "can take many times longer; --n-embd %d is the nearest that keeps them", n_embd, fast);
    return buf;
}

std::string Config::describe() const {
    if (kind == ModelKind::Bigram) return "bigram (embedding lookup)";
    char buf[240];
    std::snprintf(buf, sizeof buf, "%s%d layer%s x %d head%s x %d, n_embd %d, block %d%s%s%s%s%s%s",
                  nanogpt ? (bias ? "nanoGPT, bias: " : "nanoGPT: ") : "", n_layer,
                  n_layer > 1 ? "s" : "", n_head, n_head > 1 ? "s" : "", hs(), n_embd, block_size, ffn ? (gelu ? (gelu_tanh ? ", ffn (GELU, tanh)" : ", ffn (GELU)") : ", ffn") : "",
                  residual ? ", residual" : "", layernorm ? ", layernorm" : "", dropout > 0 ? ", dropout" : "",
                  causal ? "" : ", ENCODER (no mask)", use_pos ? "" : ", no position embeddings");
    return buf;
}

float Config::lr_at(int it) const {
    if (warmup_iters <= 0 && lr_decay_iters <= 0) return lr;
    if (it < warmup_iters) return lr * float(it + 1) / float(warmup_iters + 1);
    if (lr_decay_iters <= 0) return lr;  // warm-up alone, then constant
    if (it > lr_decay_iters) return min_lr;
    double ratio = double(it - warmup_iters) / double(std::max(1, lr_decay_iters - warmup_iters));
    double coeff = 0.5 * (1.0 + std::cos(M_PI * ratio));
    return float(min_lr + coeff * (lr - min_lr));
}

Config with_live_fields(const Config& base, const Config& from) {
    Config c = base;
    c.batch_size = from.batch_size;
    c.lr = from.lr;
    c.warmup_iters = from.warmup_iters;
    c.lr_decay_iters = from.lr_decay_iters;
    c.min_lr = from.min_lr;
    c.weight_decay = from.weight_decay;
    c.beta2 = from.beta2;
    c.grad_clip = from.grad_clip;
    c.max_iters = from.max_iters;
    c.eval_interval = from.eval_interval;
    c.eval_iters = from.eval_iters;
    c.temperature = from.temperature;
    c.top_k = from.top_k;
    c.sample_chars = from.sample_chars;
    c.causal = from.causal;  // the mask and dropout change no shapes: re-recording is enough
    c.dropout = from.dropout;
    return c;
}

static void range_int(std::vector<ConfigError>& e, const char* flag, long long v, long long lo, long long hi,
                      const char* hint) {
    if (v < lo || v > hi)
        e.push_back({flag, std::string(flag) + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                               " (got " + std::to_string(v) + ")" + hint});
}

static void range_float(std::vector<ConfigError>& e, const char* flag, float v, float lo, float hi, bool lo_open) {
    bool ok = std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
    if (!ok) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s must be a number %s %g and at most %g (got %g)", flag,
                      lo_open ? "greater than" : "at least", lo, hi, v);
        e.push_back({flag, buf});
    }
}

std::vector<ConfigError> validate(const Config& c) {
    std::vector<ConfigError> e;
    range_int(e, "--block-size", c.block_size, 1, 1024, "; the lecture uses 8, the gpt preset 256");
    range_int(e, "--batch-size", c.batch_size, 1, 4096, "");
    // checked for the bigram too: a nonsense value is refused even where it would be ignored
    range_int(e, "--n-embd", c.n_embd, 1, 4096, "");
    range_int(e, "--n-head", c.n_head, 1, 64, "");
    range_int(e, "--head-size", c.head_size, 0, 4096, "; 0 means n_embd / n_head");
    range_int(e, "--n-layer", c.n_layer, 1, 48, "");
    range_float(e, "--dropout", c.dropout, 0.0f, 0.9f, false);
    if (c.seed > (uint64_t(1) << 53))
        e.push_back({"--seed", "--seed must be between 0 and 2^53 (got " + std::to_string(c.seed) + ")"});
    if (c.kind != ModelKind::Bigram) {
        if (e.empty() && c.hs() < 1)
            e.push_back({"--n-head", "--n-head " + std::to_string(c.n_head) + " leaves no room in n_embd " +
                                         std::to_string(c.n_embd) + ": use fewer heads or a wider --n-embd"});
        bool stacked = c.ffn || c.residual || c.layernorm || c.n_layer > 1;
        if (e.empty() && c.attn_dim() != c.n_embd && c.head_size == 0)  // derived: n_embd % n_head != 0
            e.push_back({"--n-embd", "--n-embd " + std::to_string(c.n_embd) + " must be a multiple of --n-head (" +
                                         std::to_string(c.n_head) + ") to split into heads of equal size: e.g. " +
                                         std::to_string(c.n_embd / c.n_head * c.n_head) + " or " +
                                         std::to_string((c.n_embd / c.n_head + 1) * c.n_head)});
        else if (e.empty() && stacked && c.attn_dim() != c.n_embd)
            e.push_back({"--head-size", "n_head x head_size (" + std::to_string(c.n_head) + " x " + std::to_string(c.hs()) +
                                            ") must equal n_embd (" + std::to_string(c.n_embd) +
                                            ") once blocks are stacked or have a feed-forward, residual or LayerNorm: "
                                            "set --head-size 0 to derive it"});
    }
    if (c.kind != ModelKind::Bigram && c.nanogpt && !(c.ffn && c.gelu && c.residual && c.layernorm))
        e.push_back({"--preset", "nanoGPT's GPT has a GELU feed-forward, residual blocks and LayerNorm: keep --activation "
                                 "gelu and the nanogpt preset's switches, or choose a lecture preset"});
    range_float(e, "--lr", c.lr, 0.0f, 10.0f, true);
    range_float(e, "--weight-decay", c.weight_decay, 0.0f, 1.0f, false);
    range_float(e, "--beta2", c.beta2, 0.0f, 0.99999f, false);
    range_float(e, "--grad-clip", c.grad_clip, 0.0f, 1e6f, false);
    range_int(e, "--warmup-iters", c.warmup_iters, 0, 100000000, "");
    range_int(e, "--lr-decay-iters", c.lr_decay_iters, 0, 100000000, "; 0 means no decay");
    if (c.lr_decay_iters > 0 && c.lr_decay_iters < c.warmup_iters)
        e.push_back({"--lr-decay-iters", "--lr-decay-iters (" + std::to_string(c.lr_decay_iters) +
                                             ") must be at least --warmup-iters (" + std::to_string(c.warmup_iters) + ")"});
    if (!(c.min_lr >= 0.0f && (c.min_lr <= c.lr || !(c.lr > 0.0f))))  // a bad --lr is said once, above
        e.push_back({"--min-lr", "--min-lr must be between 0 and --lr (got " + std::to_string(c.min_lr) + ")"});
    range_int(e, "--max-iters", c.max_iters, 0, 100000000, "");
    range_int(e, "--eval-interval", c.eval_interval, 1, 100000000, "");
    range_int(e, "--eval-iters", c.eval_iters, 1, 100000, "");
    range_float(e, "--temperature", c.temperature, 0.0f, 100.0f, true);
    range_int(e, "--top-k", c.top_k, 0, 1 << 20, "; 0 means no top-k");
    range_int(e, "--sample-chars", c.sample_chars, 0, 1000000, "");
    return e;
}

}  // namespace attn
