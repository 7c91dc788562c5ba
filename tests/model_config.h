// The tiny model the model tests train: batch 3, block 5, n_embd 6, head size 4, seed 42, on a preset's switches.
#pragma once
#include <string>

#include "model/config.h"

inline attn::Config tiny_config(const std::string& preset) {
    attn::Config c;
    c.apply_preset(preset);
    c.batch_size = 3;
    c.block_size = 5;
    c.n_embd = 6;
    c.head_size = 4;
    c.seed = 42;
    return c;
}
