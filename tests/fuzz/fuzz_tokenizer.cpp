// libFuzzer harness for the tokenizer readers and byte-level BPE: the first byte picks llm.c's .bin or GPT-2's
// encoder.json + vocab.bpe (split at the first NUL); any bytes either load or throw attn::Error, never crash, and a
// tokenizer that loads, or one learned on the input, gives back the exact bytes it encoded.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "text/bpe.h"
#include "text/bpe_files.h"
#include "vk/check.h"

static void round_trip(const attn::BpeTokenizer& t, const std::string& text) {
    if (t.decode(t.encode(text, true)) != text && text.find("<|endoftext|>") == std::string::npos) std::abort();
    if (t.decode(t.encode(text, false)) != text) std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    std::string in(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        if (data[0] % 3 == 0) {
            round_trip(attn::parse_llmc_tokenizer(in, "fuzz.bin"), in.substr(0, 256));
        } else if (data[0] % 3 == 1) {
            size_t nul = in.find('\0');
            std::string json = in.substr(0, nul), bpe = nul == std::string::npos ? "" : in.substr(nul + 1);
            round_trip(attn::parse_gpt2_files(json, bpe, "encoder.json", "vocab.bpe"), in.substr(0, 256));
        } else {
            round_trip(attn::learn_bpe(in, 256 + data[0] % 64), in);
        }
    } catch (const attn::Error&) {
    }
    return 0;
}
