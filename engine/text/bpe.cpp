// Byte-level BPE: the pre-tokenizer, merging by rank with a heap, decoding, and learning merges on a corpus.
#include "text/bpe.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <queue>
#include <tuple>

#include "text/unicode.h"
#include "vk/check.h"

namespace attn {

namespace {

// One character of the text: where it starts, how many bytes, its class, and whether it is the plain space the
// pattern's " ?" allows before a run.
struct Unit {
    size_t at;
    uint8_t len;
    CharClass cls;
    bool blank;  // U+0020
};

std::vector<Unit> units_of(std::string_view text) {
    std::vector<Unit> u;
    u.reserve(text.size());
    auto* p = reinterpret_cast<const unsigned char*>(text.data());
    for (size_t i = 0; i < text.size();) {
        uint32_t cp = 0;
        size_t n = utf8_next(p + i, text.size() - i, &cp);
        if (n == 0) {
            u.push_back({i, 1, CharClass::other, false});  // an invalid byte: one character of no class
            i += 1;
        } else {
            u.push_back({i, uint8_t(n), char_class(cp), cp == ' '});
            i += n;
        }
    }
    return u;
}

uint64_t pair_key(int a, int b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

}  // namespace

std::vector<std::string_view> pretokenize(std::string_view text) {
    std::vector<std::string_view> pieces;
    std::vector<Unit> u = units_of(text);
    const size_t n = u.size();
    auto piece = [&](size_t i, size_t j) {  // units [i, j)
        size_t end = j < n ? u[j].at : text.size();
        pieces.push_back(text.substr(u[i].at, end - u[i].at));
    };
    auto run_end = [&](size_t i, CharClass c) {
        while (i < n && u[i].cls == c) ++i;
        return i;
    };
    static const char* const k_contractions[] = {"s", "t", "re", "ve", "m", "ll", "d"};
    for (size_t i = 0; i < n;) {
        // 's 't 're 've 'm 'll 'd
        if (text[u[i].at] == '\'') {
            std::string_view rest = text.substr(u[i].at + 1);
            size_t took = 0;
            for (const char* c : k_contractions)
                if (rest.substr(0, std::strlen(c)) == c) {
                    took = std::strlen(c);
                    break;
                }
            if (took) {  // ASCII letters: one unit each
                piece(i, i + 1 + took);
                i += 1 + took;
                continue;
            }
        }
        // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+', in this order
        bool matched = false;
        for (CharClass c : {CharClass::letter, CharClass::number, CharClass::other}) {
            if (u[i].blank && i + 1 < n && u[i + 1].cls == c) {
                size_t j = run_end(i + 1, c);
                piece(i, j);
                i = j;
                matched = true;
                break;
            }
            if (u[i].cls == c) {
                size_t j = run_end(i, c);
                piece(i, j);
                i = j;
                matched = true;
                break;
            }
        }
        if (matched) continue;
        // whitespace: '\s+(?!\S)' takes the run but its last character when a non-space follows, '\s+' the rest
        size_t j = run_end(i, CharClass::space);
        if (j < n && j - i >= 2) j -= 1;
        piece(i, j);
        i = j;
    }
    return pieces;
}

BpeTokenizer::BpeTokenizer(std::vector<std::string> tokens, std::vector<BpeMerge> merges, int eot)
    : m_tokens(std::move(tokens)), m_merges(std::move(merges)), m_eot(eot) {
    const int V = int(m_tokens.size());
    if (eot < -1 || eot >= V) throw Error("the end-of-text token's id " + std::to_string(eot) + " is not in the vocabulary");
    std::fill(std::begin(m_byte_id), std::end(m_byte_id), -1);
    for (int i = V - 1; i >= 0; --i)  // the first id of a repeated byte wins
        if (i != eot && m_tokens[size_t(i)].size() == 1) m_byte_id[uint8_t(m_tokens[size_t(i)][0])] = i;
    for (int b = 0; b < 256; ++b)
        if (m_byte_id[b] < 0)
            throw Error("the vocabulary has no token for byte " + std::to_string(b) + ": not a byte-level BPE vocabulary");
    // made[id]: whether token id exists yet (a byte, or made by an earlier merge)
    std::vector<char> made(size_t(V), 0);
    for (int b = 0; b < 256; ++b) made[size_t(m_byte_id[b])] = 1;
    m_rank.reserve(m_merges.size() * 2);
    for (int r = 0; r < int(m_merges.size()); ++r) {
        auto [a, b, c] = m_merges[size_t(r)];
        std::string where = "merge " + std::to_string(r + 1);
        auto bad = [&](int x) { return x < 0 || x >= V || x == eot; };
        if (bad(a) || bad(b) || bad(c)) throw Error(where + " names a token outside the vocabulary");
        if (!made[size_t(a)] || !made[size_t(b)])
            throw Error(where + " joins a token that no earlier merge makes: merges out of order");
        if (m_tokens[size_t(c)] != m_tokens[size_t(a)] + m_tokens[size_t(b)])
            throw Error(where + "'s token is not its two parts joined");
        made[size_t(c)] = 1;
        m_rank.emplace(pair_key(a, b), Merge{r, c});  // a repeated pair keeps its first rank
    }
}

void BpeTokenizer::encode_piece(std::string_view piece, std::vector<int>& out) const {
    // The piece's bytes as a linked list of symbols; a heap of the adjacent pairs that have a rank, lowest rank
    // first and leftmost first among equals: every occurrence of a rank's pair merges left to right, without
    // overlap, before any later rank's (encoder.py's loop, in n log n instead of n^2 for long pieces).
    const int n = int(piece.size());
    if (n == 0) return;
    if (n == 1) {
        out.push_back(m_byte_id[uint8_t(piece[0])]);
        return;
    }
    struct Sym {
        int id, prev, next;
    };
    std::vector<Sym> s(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) s[size_t(i)] = {m_byte_id[uint8_t(piece[size_t(i)])], i - 1, i + 1 < n ? i + 1 : -1};
    using Entry = std::tuple<int, int, int, int>;  // rank, left position, left id, right id
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
    auto push = [&](int i) {
        if (i < 0) return;
        int j = s[size_t(i)].next;
        if (j < 0) return;
        auto it = m_rank.find(pair_key(s[size_t(i)].id, s[size_t(j)].id));
        if (it != m_rank.end()) heap.emplace(it->second.rank, i, s[size_t(i)].id, s[size_t(j)].id);
    };
    for (int i = 0; i + 1 < n; ++i) push(i);
    while (!heap.empty()) {
        auto [rank, i, a, b] = heap.top();
        heap.pop();
        Sym& left = s[size_t(i)];
        if (left.id != a || left.next < 0 || s[size_t(left.next)].id != b) continue;  // stale: merged since
        int j = left.next;
        left.id = m_rank.at(pair_key(a, b)).id;
        left.next = s[size_t(j)].next;
        if (left.next >= 0) s[size_t(left.next)].prev = i;
        s[size_t(j)].id = -1;
        push(left.prev);
        push(i);
    }
    for (int i = 0; i >= 0; i = s[size_t(i)].next) out.push_back(s[size_t(i)].id);
}

std::vector<int> BpeTokenizer::encode(std::string_view text, bool special) const {
    std::vector<int> ids;
    ids.reserve(text.size() / 3);
    std::unordered_map<std::string_view, std::vector<int>> cache;  // pieces repeat: words of a corpus
    auto ordinary = [&](std::string_view part) {
        for (std::string_view p : pretokenize(part)) {
            if (p.size() > 64) {  // rare and long: not worth keeping
                encode_piece(p, ids);
                continue;
            }
            auto it = cache.find(p);
            if (it == cache.end()) {
                std::vector<int> v;
                encode_piece(p, v);
                it = cache.emplace(p, std::move(v)).first;
            }
            ids.insert(ids.end(), it->second.begin(), it->second.end());
        }
    };
    static constexpr std::string_view k_eot = "<|endoftext|>";
    if (!special || m_eot < 0) {
        ordinary(text);
        return ids;
    }
    for (size_t at = 0;;) {
        size_t hit = text.find(k_eot, at);
        ordinary(text.substr(at, hit == std::string_view::npos ? std::string_view::npos : hit - at));
        if (hit == std::string_view::npos) break;
        ids.push_back(m_eot);
        at = hit + k_eot.size();
    }
    return ids;
}

bool BpeTokenizer::same_as(const BpeTokenizer& o) const {
    if (m_tokens != o.m_tokens || m_eot != o.m_eot || m_merges.size() != o.m_merges.size()) return false;
    for (size_t i = 0; i < m_merges.size(); i++) {
        const BpeMerge &a = m_merges[i], &b = o.m_merges[i];
        if (a.left != b.left || a.right != b.right || a.result != b.result) return false;
    }
    return true;
}

std::string bytes_as_text(std::string_view bytes) {
    std::string out;
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    for (size_t i = 0; i < bytes.size();) {
        uint32_t cp = 0;
        size_t n = utf8_next(p + i, bytes.size() - i, &cp);
        if (n == 0) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", unsigned(p[i]));
            out += hex;
            n = 1;
        } else {
            out.append(bytes.substr(i, n));
        }
        i += n;
    }
    return out;
}

std::string visible_bytes(std::string_view bytes) {
    std::string out;
    for (char ch : bytes_as_text(bytes)) {  // (the bytes of a character past ASCII are never blanks or controls)
        const auto c = static_cast<unsigned char>(ch);
        if (c == ' ') out += "\u2423";
        else if (c == '\n') out += "\u23ce";
        else if (c == '\t') out += "\u21e5";
        else if (c < 32 || c == 127) {
            out += '^';
            out += char(c == 127 ? '?' : '@' + c);
        } else {
            out += ch;
        }
    }
    return out;
}

std::string BpeTokenizer::decode(const std::vector<int>& ids) const {
    std::string out;
    for (int id : ids) {
        if (id < 0 || id >= vocab_size())
            throw Error("token id " + std::to_string(id) + " is outside the vocabulary (0-" +
                        std::to_string(vocab_size() - 1) + ")");
        out += m_tokens[size_t(id)];
    }
    return out;
}

std::string show_token(std::string_view bytes) {
    static const char hex[] = "0123456789ABCDEF";
    std::string out;
    auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    for (size_t i = 0; i < bytes.size();) {
        uint32_t cp = 0;
        size_t n = utf8_next(p + i, bytes.size() - i, &cp);
        if (n == 0 || cp < 0x20 || cp == 0x7F) {
            if (n == 1 && cp == '\n') out += "\\n";
            else if (n == 1 && cp == '\t') out += "\\t";
            else if (n == 1 && cp == '\r') out += "\\r";
            else {
                out += "\\x";
                out += hex[p[i] >> 4];
                out += hex[p[i] & 15];
            }
            i += 1;
        } else if (cp == ' ' && i == 0) {
            out += "\xE2\x90\xA3";  // ␣
            i += 1;
        } else {
            out.append(bytes.substr(i, n));
            i += n;
        }
    }
    return out;
}

BpeTokenizer learn_bpe(std::string_view corpus, int vocab_size, const std::function<void(int, int)>& progress) {
    if (vocab_size < 256 || vocab_size > (1 << 20))
        throw Error("a BPE vocabulary of " + std::to_string(vocab_size) + " is out of range: give 256 to 1048576 "
                    "(256 are the bytes; each id more is one merge)");
    // the corpus's distinct pieces, each as ids (bytes to start) with how often it occurs
    std::unordered_map<std::string_view, int> counts;
    for (std::string_view p : pretokenize(corpus)) ++counts[p];
    std::vector<std::pair<std::string_view, int>> sorted(counts.begin(), counts.end());
    std::sort(sorted.begin(), sorted.end());  // a fixed order: the result never depends on hashing
    std::vector<std::vector<int>> words;
    std::vector<int> freq;
    for (auto& [p, c] : sorted) {
        if (p.size() < 2) continue;  // a single byte has no pair
        words.emplace_back(p.begin(), p.end());
        for (int& x : words.back()) x = int(uint8_t(x));
        freq.push_back(c);
    }
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.emplace_back(1, char(b));
    std::vector<BpeMerge> merges;
    const int total = vocab_size - 256;
    std::unordered_map<uint64_t, long long> stats;
    for (int id = 256; id < vocab_size; ++id) {
        stats.clear();
        for (size_t w = 0; w < words.size(); ++w)
            for (size_t i = 0; i + 1 < words[w].size(); ++i) stats[pair_key(words[w][i], words[w][i + 1])] += freq[w];
        if (stats.empty()) break;
        uint64_t best = 0;
        long long best_n = -1;
        for (auto& [k, c] : stats)
            if (c > best_n || (c == best_n && k < best)) best = k, best_n = c;
        int a = int(best >> 32), b = int(best & 0xFFFFFFFFu);
        merges.push_back({a, b, id});
        tokens.push_back(tokens[size_t(a)] + tokens[size_t(b)]);
        for (auto& word : words) {  // merge every (a, b), left to right, without overlap
            size_t o = 0;
            for (size_t i = 0; i < word.size(); ++i) {
                if (i + 1 < word.size() && word[i] == a && word[i + 1] == b) {
                    word[o++] = id;
                    ++i;
                } else
                    word[o++] = word[i];
            }
            word.resize(o);
        }
        if (progress) progress(id - 255, total);
    }
    return BpeTokenizer(std::move(tokens), std::move(merges), -1);
}

}  // namespace attn
