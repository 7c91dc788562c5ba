// Byte-level BPE, GPT-2's algorithm: text is split by GPT-2's pre-tokenizer pattern into pieces, and each piece's
// bytes are merged pairwise by rank (lowest first) into tokens. Decoding any id sequence gives the exact bytes back.
//
//   pieces:  'Hello world' -> 'Hello' ' world'            (pretokenize: contractions, ' ?letters', ' ?digits',
//   merges:  ' world' -> ' ' 'w' 'o' 'r' 'l' 'd' -> ' world'  ' ?other', whitespace)
//
// Loaded from GPT-2's files (encoder.json + vocab.bpe, the same as Hugging Face's vocab.json + merges.txt) or llm.c's
// gpt2_tokenizer.bin (text/bpe_files.cpp), or learned on a corpus (learn_bpe). tests/reference/gpt2_bpe.py is the
// reference these are tested against.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attn {

// GPT-2's pre-tokenizer, the regex 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ written
// out (no std::regex): the pieces of text in order; together they are text. Invalid UTF-8 bytes are characters of
// no class, so any bytes split.
std::vector<std::string_view> pretokenize(std::string_view text);

// One merge: the adjacent tokens left, right become the token result (tokens[result] = tokens[left] + tokens[right]).
struct BpeMerge {
    int left, right, result;
};

// Bytes as a reader sees them, so that a token's boundaries and blanks stay visible: UTF-8 characters as they are, a
// space as ␣, a newline as ⏎, a tab as ⇥, other control characters as ^X, and bytes that are no whole UTF-8 character
// (a token that ends inside one) as \xNN.
std::string visible_bytes(std::string_view bytes);
// Bytes as text: whole UTF-8 characters as they are, any other byte as \xNN (a token cut inside a character).
std::string bytes_as_text(std::string_view bytes);

class BpeTokenizer {
public:
    // tokens: id -> bytes (every single byte among them); merges: rank -> merge, each using only bytes and tokens
    // that earlier merges make; eot: the id of "<|endoftext|>" or -1. Throws attn::Error on a vocabulary that breaks
    // these (the message names the merge).
    BpeTokenizer(std::vector<std::string> tokens, std::vector<BpeMerge> merges, int eot);
    BpeTokenizer() = default;

    int vocab_size() const { return int(m_tokens.size()); }
    int n_merges() const { return int(m_merges.size()); }
    int eot() const { return m_eot; }  // -1: none
    const std::string& token(int id) const { return m_tokens[size_t(id)]; }
    const std::vector<std::string>& tokens() const { return m_tokens; }
    const std::vector<BpeMerge>& merges() const { return m_merges; }
    // The same tokens, merges and end-of-text id: the same ids for every text.
    bool same_as(const BpeTokenizer& o) const;

    // The ids of text's bytes. special: "<|endoftext|>" in the text is the one token eot (where there is one);
    // otherwise it is text like any other (GPT-2's encoder.py).
    std::vector<int> encode(std::string_view text, bool special = false) const;
    // The bytes of ids (each checked: throws attn::Error on one outside the vocabulary).
    std::string decode(const std::vector<int>& ids) const;
    // One piece of pretokenize() merged into ids (appended to out).
    void encode_piece(std::string_view piece, std::vector<int>& out) const;

private:
    std::vector<std::string> m_tokens;
    std::vector<BpeMerge> m_merges;
    int m_eot = -1;
    int m_byte_id[256] = {};
    struct Merge {
        int rank, id;
    };
    std::unordered_map<uint64_t, Merge> m_rank;  // (left << 32 | right) -> its rank and the merged id
};

// A token as text to show: valid UTF-8 as itself, with a leading space as '␣' and newlines, tabs and other control
// characters as escapes (\n, \t, \x01); bytes that are not whole UTF-8 characters as \xE2-style escapes.
std::string show_token(std::string_view bytes);

// Learns a tokenizer of vocab_size ids on corpus: ids 0-255 are the bytes, each further id the merge of the most
// frequent adjacent pair over corpus's pieces (pairs counted with overlaps, each piece weighted by how often it
// occurs; ties to the smallest (left, right) ids). Stops early when no pair is left. progress(done, total) after
// each merge, where given. vocab_size must be in 256..1048576.
BpeTokenizer learn_bpe(std::string_view corpus, int vocab_size,
                       const std::function<void(int, int)>& progress = nullptr);

}  // namespace attn
