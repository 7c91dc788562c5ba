// Presets (the lecture's settings) and validation of every hyperparameter with a message that says what to do.
#include "model/config.h"

#include <cmath>
#include <cstdio>

namespace attn {

std::vector<std::string> Config::preset_names() { return {"bigram", "single-head"}; }

bool Config::apply_preset(const std::string& name) {
    Config d;  // fresh defaults, keeping the sampling settings a user chose
    d.temperature = temperature;
    d.top_k = top_k;
    d.sample_chars = sample_chars;
    d.seed = seed;
    if (name == "bigram") {
        d.kind = ModelKind::Bigram;
        d.batch_size = 32; d.block_size = 8; d.lr = 1e-2f; d.max_iters = 3000;
    } else if (name == "single-head") {
        d.kind = ModelKind::SingleHead;
        d.batch_size = 32; d.block_size = 8; d.n_embd = 32; d.head_size = 32; d.lr = 1e-3f; d.max_iters = 5000;
    } else {
        return false;
    }
    d.preset = name;
    *this = d;
    return true;
}

double Config::lecture_val_loss() const {
    if (preset == "bigram") return 2.5;
    if (preset == "single-head") return 2.4;
    return 0.0;
}

static void range_int(std::vector<ConfigError>& e, const char* flag, int v, int lo, int hi, const char* hint) {
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
    if (c.kind != ModelKind::Bigram) {
        range_int(e, "--n-embd", c.n_embd, 1, 4096, "");
        range_int(e, "--head-size", c.head_size, 1, 4096, "");
    }
    range_float(e, "--lr", c.lr, 0.0f, 10.0f, true);
    range_float(e, "--weight-decay", c.weight_decay, 0.0f, 1.0f, false);
    range_int(e, "--max-iters", c.max_iters, 0, 100000000, "");
    range_int(e, "--eval-interval", c.eval_interval, 1, 100000000, "");
    range_int(e, "--eval-iters", c.eval_iters, 1, 100000, "");
    range_float(e, "--temperature", c.temperature, 0.0f, 100.0f, true);
    range_int(e, "--top-k", c.top_k, 0, 1 << 20, "; 0 means no top-k");
    range_int(e, "--sample-chars", c.sample_chars, 0, 1000000, "");
    return e;
}

}  // namespace attn
