// libFuzzer harness for opening nanoGPT's checkpoints (engine/io/nanogpt.h): any bytes, written to a file as
// `attnlab import nanogpt` would read it, either give a run or throw attn::Error; never a crash, a hang or another
// exception (bad_alloc from a size the file does not back included).
#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

#include "io/nanogpt.h"
#include "vk/check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::string path = "/tmp/attn_fuzz_nanogpt_" + std::to_string(::getpid()) + ".pt";
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return 0;
    std::fwrite(data, 1, size, f);
    std::fclose(f);
    static const std::vector<uint32_t> vocab = {'\n', ' ', 'a', 'b', 0xe9};  // the fixtures' five characters
    try {
        attn::Checkpoint ck = attn::import_nanogpt(path, "", &vocab);
        (void)ck.state.params.size();
    } catch (const attn::Error&) {
    }
    return 0;
}
