// Dataset: a UTF-8 corpus, its tokenizer (the lecture's: sorted unique code points; or byte-level BPE, text/bpe.h)
// and the 90/10 split.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attn {

class BpeTokenizer;

class Dataset {
public:
    // Reads and checks a corpus file; throws attn::Error with a one-line message on any problem. "induction" and
    // "induction:SEED" name the generated induction corpus instead (train/induction_corpus.h; a file of that name:
    // ./induction).
    static Dataset from_file(const std::string& path);
    // Same checks on text already in memory (`name` is shown in messages).
    static Dataset from_text(const std::string& text, const std::string& name);
    // The corpus read as tokens of `tokenizer`: "chars" (or "") the lecture's characters; "bpe:N" N ids of byte-level
    // BPE learned on this corpus; else GPT-2's tokenizer files (text/bpe_files.h: a folder, encoder.json, llm.c's .bin).
    static Dataset from_file(const std::string& path, const std::string& tokenizer);
    // ... with a BPE tokenizer already made (a checkpoint's).
    static Dataset from_file(const std::string& path, std::shared_ptr<const BpeTokenizer> bpe);
    static Dataset from_text(const std::string& text, const std::string& name, std::shared_ptr<const BpeTokenizer> bpe);

    const std::string& name() const { return m_name; }
    size_t bytes() const { return m_bytes; }
    // Whether the text is tiny Shakespeare, the lecture's corpus (by content, whatever the file is called): the
    // lecture's losses are comparable only there.
    bool is_tiny_shakespeare() const { return m_tiny_shakespeare; }
    int vocab_size() const;
    // id -> code point for the lecture's characters; empty for BPE (whose tokens are byte strings: bpe())
    const std::vector<uint32_t>& vocab() const { return m_vocab; }
    // The text's characters, sorted: vocab() for the lecture's tokens, the same set for BPE (what a font needs).
    const std::vector<uint32_t>& characters() const { return m_bpe ? m_chars : m_vocab; }
    // The BPE tokenizer (null: characters); its tokens are what decode(id) gives.
    const std::shared_ptr<const BpeTokenizer>& bpe() const { return m_bpe; }
    // Characters (code points) a token, over the whole corpus: 1 for characters. A loss per token divided by this is
    // the loss per character, comparable with a character model's.
    double chars_per_token() const { return m_chars_per_token; }
    const std::vector<uint32_t>& tokens() const { return m_tokens; }  // whole corpus, encoded
    size_t n_train() const { return m_n_train; }                       // first 90%
    size_t n_val() const { return m_tokens.size() - m_n_train; }       // last 10%

    std::vector<uint32_t> encode(const std::string& s) const;  // unknown characters are skipped (BPE knows all bytes)
    std::string decode(const std::vector<uint32_t>& ids) const;
    std::string decode(uint32_t id) const;
    bool knows(uint32_t codepoint) const;
    // The characters of s that encode() skips, each once, in order of first appearance (UTF-8; "" when all are known;
    // a note saying so when s is not UTF-8, which encode() skips whole).
    std::string unknown_chars(const std::string& s) const;

    // Refuses a block size this corpus cannot fill (each split needs block_size+1 tokens). flag: the user chose it
    // (--block-size), so the message offers a smaller one besides a longer text.
    void check_block_size(int block_size, bool flag = true) const;

private:
    std::string m_name;
    size_t m_bytes = 0;
    bool m_tiny_shakespeare = false;
    std::vector<uint32_t> m_vocab;  // id -> code point, sorted
    std::vector<uint32_t> m_chars;  // BPE: the text's characters (the character vocabulary it would have)
    std::shared_ptr<const BpeTokenizer> m_bpe;
    double m_chars_per_token = 1;
    std::vector<uint32_t> m_tokens;
    size_t m_n_train = 0;
};

// UTF-8 helpers; decode_utf8 returns false (and the byte offset) on invalid input.
bool decode_utf8(const std::string& s, std::vector<uint32_t>& out, size_t* bad_offset);
std::string encode_utf8(uint32_t cp);

}  // namespace attn
