// libFuzzer harness for the corpus loader: any bytes either load or throw attn::Error, never crash.
#include <cstdint>
#include <string>

#include "train/dataset.h"
#include "vk/check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        attn::Dataset d = attn::Dataset::from_text(text, "fuzz");
        d.check_block_size(8);
        auto ids = d.encode(text.substr(0, 64));
        (void)d.decode(ids);
    } catch (const attn::Error&) {
    }
    return 0;
}
