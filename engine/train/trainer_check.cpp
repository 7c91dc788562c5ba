// What a configuration needs of a device, checked before anything is built (Trainer::check): the tensors it binds
// within the device's limits, its memory, and the loops a CPU driver would cut short.
#include <cmath>
#include <cstdint>
#include <string>

#include "ops/attention.h"
#include "train/trainer.h"

namespace attn {

void Trainer::check(const Context& ctx, const Dataset& data, const Config& cfg) {
    auto errs = validate(cfg);
    if (!errs.empty()) throw Error(errs.front().message);
    data.check_block_size(cfg.block_size);
    check_cpu_loops(ctx, cfg, data.vocab_size());
    if (cfg.kind == ModelKind::Bigram) {  // its one table, (V, V) logits for every character: the vocabulary squared
        uint64_t V = uint64_t(data.vocab_size()), limit = ctx.props().limits.maxStorageBufferRange;
        if (V * V * 4 > limit)
            throw Error("the bigram's table of " + std::to_string(V) + " x " + std::to_string(V) + " weights (" +
                        std::to_string((V * V * 4) >> 20) + " MiB) exceeds " + ctx.device_name() + "'s limit of " +
                        std::to_string(limit >> 20) + " MiB a tensor: use a text with at most " +
                        std::to_string(uint64_t(std::sqrt(double(limit / 4)))) +
                        " distinct characters, or another preset (their tables grow with the vocabulary, not its square)");
    }
    if (cfg.kind != ModelKind::Bigram) {  // the largest tensors a step binds: the token embedding and the logits
        // (written in ranges that fit the device's bindings, as the flat parameters AdamW updates are)
        uint64_t V = uint64_t(data.vocab_size()), limit = ctx.policy().max_storage_range;
        uint64_t wte = V * uint64_t(cfg.n_embd) * 4, logits = uint64_t(cfg.batch_size) * cfg.block_size * V * 4;
        auto mib = [](uint64_t b) { return std::to_string((b + (1 << 20) - 1) >> 20); };
        // those ranges need the vec4 kernels (n_embd a multiple of 4) and more tokens than channels
        if (wte > limit && (cfg.n_embd % 4 != 0 || uint64_t(cfg.n_embd) > V))
            throw Error("the token embedding (" + std::to_string(V) + " tokens x n_embd " + std::to_string(cfg.n_embd) +
                        ", " + mib(wte) + " MiB) exceeds " + ctx.device_name() + "'s limit of " + mib(limit) +
                        " MiB a tensor, and its n_embd is not a multiple of 4: use one that is, or a GPU with a "
                        "larger limit (--list-devices)");
        // logits past the limit are written and read in ranges of rows, or as texels (maxTexelBufferElements
        // vec4s) by the vec4 kernels of lm_head's backward: those need n_embd a multiple of 4
        uint64_t texels = uint64_t(ctx.props().limits.maxTexelBufferElements) * 16;
        if (logits > limit && (cfg.lm_head_width() % 4 != 0 || logits > texels))
            throw Error("the logits of a batch (" + std::to_string(cfg.batch_size) + " x block " +
                        std::to_string(cfg.block_size) + " x " + std::to_string(V) + " tokens, " + mib(logits) +
                        " MiB) exceed " + ctx.device_name() + "'s limit of " + mib(limit) + " MiB a tensor: lower "
                        "--batch-size (an imported model's block size: attnlab import ... --block-size N)");
    }
    // the whole token stream is one tensor, 4 bytes a character: the device's limit on one tensor bounds the text
    // (batch and block size do not change it)
    uint64_t stream = uint64_t(data.tokens().size()) * 4, tensor_limit = ctx.policy().max_storage_range;
    if (stream > tensor_limit)
        throw Error("corpus '" + data.name() + "' has " + std::to_string(data.tokens().size()) + " characters, and " +
                    ctx.device_name() + " holds at most " + std::to_string(tensor_limit >> 20) +
                    " MiB in one tensor (4 bytes a character): at most " + std::to_string(tensor_limit / 4) +
                    " characters. Use a shorter text (a part of it), or a GPU with a larger limit (--list-devices)");
    size_t need = Model::bytes_needed(cfg, data.vocab_size()) + data.tokens().size() * 4;
    if (need > ctx.device_memory_bytes())
        throw Error("this configuration needs " + std::to_string(need >> 20) + " MiB of GPU memory but " + ctx.device_name() +
                    " has " + std::to_string(ctx.device_memory_bytes() >> 20) +
                    " MiB: lower --batch-size, --block-size" +
                    (cfg.kind == ModelKind::Bigram ? std::string(" or use a text with fewer distinct characters")
                                                   : std::string(", --n-embd or --n-layer")));
}

void Trainer::check_cpu_loops(const Context& ctx, const Config& cfg, int vocab_size) {
    if (!ctx.policy().cpu_device) return;
    auto refuse = [&](const std::string& what, uint64_t got, uint64_t most, const std::string& fix) {
        throw Error(what + " is " + std::to_string(got) + " here, and on a CPU Vulkan driver (" + ctx.device_name() +
                    ") Attention Lab takes at most " + std::to_string(most) +
                    ": the driver ends a shader's loops after 65535 iterations in all, which would cut sums short "
                    "silently. " + fix + ", or run on a GPU (--list-devices).");
    };
    if (uint64_t(vocab_size) > k_cpu_max_vocab)
        refuse("the vocabulary (distinct characters of the text)", vocab_size, k_cpu_max_vocab,
               "Use a text with fewer distinct characters");
    uint64_t rows = uint64_t(cfg.batch_size) * cfg.block_size;
    if (rows > k_cpu_max_rows)
        refuse("--batch-size x --block-size", rows, k_cpu_max_rows, "Lower --batch-size or --block-size");
    // the vec4 attention kernels unroll their loops over the head (a specialisation constant), the others loop over
    // it (head sizes not a multiple of 4, or above 128): T x head size iterations a row, several times over
    uint64_t span = uint64_t(cfg.block_size) * cfg.hs();
    if (cfg.kind != ModelKind::Bigram && !ops::attention_vec4(uint32_t(cfg.hs())) && span > k_cpu_max_block_x_head)
        refuse("--block-size x head size (" + std::to_string(cfg.hs()) + ": not a multiple of 4 up to 128)", span,
               k_cpu_max_block_x_head,
               "Lower --block-size, or use a head size that is a multiple of 4 up to 128 (--n-head, --n-embd, "
               "--head-size)");
}

}  // namespace attn
