// `attnlab tokenize TOKENIZER TEXT`: the ids a tokenizer gives TEXT, one line, space-separated (--show: one token a
// line, its id and its bytes shown as text; --decode: ids back to their bytes). TOKENIZER: chars:CORPUS, a run's checkpoint, GPT-2's files (a folder,
// encoder.json, vocab.json, llm.c's gpt2_tokenizer.bin) or bpe:N:CORPUS (N ids learned on CORPUS).
#pragma once

namespace attn {

// argv[0] is "tokenize". Returns the exit code: 0, or 2 after one line on stderr saying what to change.
int run_tokenize_command(int argc, char** argv);

}  // namespace attn
