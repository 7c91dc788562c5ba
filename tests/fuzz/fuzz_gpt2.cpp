// libFuzzer harness for GPT-2's model readers (engine/io/gpt2.h): any bytes, written to a file as `attnlab import gpt2`
// and `attnlab import llmc` would read it, are read as Hugging Face's safetensors and as llm.c's .bin; each gives a
// model or throws attn::Error, never a crash, a hang or another exception (bad_alloc from a size the file does not
// back included). A config.json of one head sits beside the file, as in a Hugging Face folder.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "io/files.h"
#include "io/gpt2.h"
#include "vk/check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::string dir = [] {
        std::string d = "/tmp/attn_fuzz_gpt2_" + std::to_string(::getpid());
        std::filesystem::create_directories(d);
        if (FILE* c = std::fopen((d + "/config.json").c_str(), "wb")) {
            std::fputs(R"({"n_head": 1, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-05})", c);
            std::fclose(c);
        }
        return d;
    }();
    static const std::string path = dir + "/model.safetensors";
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return 0;
    std::fwrite(data, 1, size, f);
    std::fclose(f);
    for (int reader = 0; reader < 2; reader++) {
        try {
            attn::ImportedModel m = reader == 0 ? attn::read_hf_gpt2(path) : attn::read_llmc(path);
            (void)m.ck.state.params.size();
        } catch (const attn::Error&) {
        }
        attn::forget_files("the GPT-2 model");
        attn::forget_files("the llm.c model");
    }
    return 0;
}
