// The induction corpus: a generated text in which random strings repeat within the block, so that only copying
// from the context lowers the loss on the repeats (the data that makes induction heads form; docs/induction.md).
// Named as a corpus is, `--data induction` or `--data induction:SEED`: Dataset::from_file generates it.
#pragma once
#include <cstdint>
#include <string>

namespace attn {

constexpr uint64_t k_induction_corpus_seed = 1337;  // `induction` alone
constexpr int k_induction_lines = 10000;            // ~330 KB: 9000 lines to train on, 1000 to validate
constexpr int k_induction_min_len = 8, k_induction_max_len = 24;  // a line's string, before it repeats

// Whether `spec` names the generated corpus: "induction" (seed k_induction_corpus_seed) or "induction:SEED"; its
// seed into *seed. Throws attn::Error for "induction:" with something other than a whole number after it.
bool parse_induction_corpus(const std::string& spec, uint64_t* seed);

// k_induction_lines lines, each a string of k_induction_min_len to k_induction_max_len random letters a-z (each
// length and letter equally likely) written twice, then a newline: "qhzpmcjw" -> "qhzpmcjwqhzpmcjw\n". The first
// copy is random (log 26 nats a letter at best); the second is known from the first.
std::string induction_text(uint64_t seed);

}  // namespace attn
