// libFuzzer harness for the checkpoint reader: any bytes either parse or throw attn::Error, never crash.
#include <cstdint>
#include <string>

#include "train/checkpoint.h"
#include "vk/check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string bytes(reinterpret_cast<const char*>(data), size);
    try {
        attn::Checkpoint ck = attn::parse_checkpoint(bytes, "fuzz");
        (void)ck;
    } catch (const attn::Error&) {
    }
    return 0;
}
