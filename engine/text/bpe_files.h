// GPT-2's tokenizer files in: encoder.json + vocab.bpe (OpenAI's names; Hugging Face's vocab.json + merges.txt hold
// the same), and llm.c's gpt2_tokenizer.bin (the tokens' bytes only: the merges are recovered from their order).
#pragma once
#include <string>

#include "text/bpe.h"

namespace attn {

// A tokenizer from PATH: a folder holding encoder.json + vocab.bpe (or vocab.json + merges.txt), either of those
// files (its partner beside it), or an llm.c tokenizer .bin. Throws attn::Error with one line naming the file and
// what is wrong with it (missing, truncated, not JSON, a merge of unknown tokens).
BpeTokenizer load_bpe_tokenizer(const std::string& path);

// GPT-2's two files' contents (names for messages): encoder.json maps each token, written in encoder.py's
// bytes-to-unicode alphabet, to its id; vocab.bpe lists the merges by rank, "left right" a line, after a #version line.
BpeTokenizer parse_gpt2_files(const std::string& encoder_json, const std::string& vocab_bpe,
                              const std::string& json_name, const std::string& bpe_name);

// llm.c's tokenizer file: a header of 256 int32 (magic 20240328, version 1 or 2, vocabulary size, end-of-text id
// in version 2), then each token as one length byte and its bytes. Its merges are recovered: token t (not a byte)
// is what the merges before it make of its bytes, which must be exactly two tokens.
BpeTokenizer parse_llmc_tokenizer(const std::string& bytes, const std::string& name);

// encoder.py's map of the 256 bytes to printable code points (printable Latin-1 to themselves, the rest from 256).
const uint32_t* gpt2_byte_to_unicode();

}  // namespace attn
