// Writes one training step of Attention Lab to a safetensors file for bench/reference.py to replay in
// PyTorch: the initial parameters, the batch, the loss and every gradient (dropout off: masks differ).
// Usage: attn_export_step PRESET OUT.safetensors [CORPUS] [key=value ...]  e.g. n_embd=64 n_layer=4
#include <cstdio>
#include <cstdlib>
#include <string>

#include "train/checkpoint.h"
#include "train/trainer.h"

using namespace attn;

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: attn_export_step PRESET OUT.safetensors [CORPUS] [n_embd=N n_head=N n_layer=N block_size=N batch_size=N]\n");
        return 2;
    }
    try {
        Config c;
        if (!c.apply_preset(argv[1])) throw Error(std::string("unknown preset ") + argv[1]);
        std::string corpus = argc > 3 ? argv[3] : "assets/tinyshakespeare.txt";
        for (int i = 4; i < argc; i++) {
            std::string kv = argv[i];
            auto eq = kv.find('=');
            std::string k = kv.substr(0, eq);
            int v = std::atoi(kv.c_str() + eq + 1);
            if (k == "n_embd") c.n_embd = v;
            else if (k == "n_head") c.n_head = v;
            else if (k == "n_layer") c.n_layer = v;
            else if (k == "block_size") c.block_size = v;
            else if (k == "batch_size") c.batch_size = v;
            else throw Error("unknown setting " + k);
        }
        c.head_size = c.preset == "single-head" ? c.head_size : 0;
        c.dropout = 0;  // PyTorch's dropout masks differ from Philox's: compare without
        Dataset data = Dataset::from_file(corpus);
        ContextOptions co;
        co.quiet = true;
        Context ctx(co);
        Trainer tr(ctx, data, c);
        std::vector<uint32_t> offs(c.batch_size);
        tr.sample_batch(offs, false);
        tr.set_batch(offs);
        auto params = tr.model().read_params();
        float loss = tr.forward_backward();
        auto grads = tr.model().read_grads();
        std::vector<std::pair<std::string, std::vector<float>>> tensors;
        std::vector<std::vector<int>> shapes;
        for (const auto& pi : tr.model().params_info()) {
            tensors.emplace_back(pi.name, std::vector<float>(params.begin() + pi.offset, params.begin() + pi.offset + pi.count));
            shapes.push_back(pi.shape);
            tensors.emplace_back("grad." + pi.name, std::vector<float>(grads.begin() + pi.offset, grads.begin() + pi.offset + pi.count));
            shapes.push_back(pi.shape);
        }
        std::vector<float> x, y;  // the batch's inputs and targets, as floats (exact for ids < 2^24)
        for (uint32_t o : offs)
            for (int t = 0; t < c.block_size; t++) {
                x.push_back(float(data.tokens()[o + t]));
                y.push_back(float(data.tokens()[o + t + 1]));
            }
        tensors.emplace_back("batch.x", x);
        shapes.push_back({c.batch_size, c.block_size});
        tensors.emplace_back("batch.y", y);
        shapes.push_back({c.batch_size, c.block_size});
        char info[512];
        std::snprintf(info, sizeof info,
                      "{\"preset\":\"%s\",\"vocab_size\":%d,\"block_size\":%d,\"n_embd\":%d,\"n_head\":%d,\"head_size\":%d,"
                      "\"n_layer\":%d,\"ffn\":%s,\"residual\":%s,\"layernorm\":%s,\"bigram\":%s,\"loss\":%.9g}",
                      c.preset.c_str(), data.vocab_size(), c.block_size, c.n_embd, c.n_head, c.hs(), c.n_layer,
                      c.ffn ? "true" : "false", c.residual ? "true" : "false", c.layernorm ? "true" : "false",
                      c.kind == ModelKind::Bigram ? "true" : "false", loss);
        save_tensors(argv[2], tensors, shapes, info);
        std::printf("%s: loss %.6f, %zu parameters -> %s\n", argv[1], loss, tr.num_params(), argv[2]);
    } catch (const Error& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    }
    return 0;
}
