// Corpus loading with clear errors, UTF-8 character tokenizer, train/val split.
#include "train/dataset.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include "io/files.h"
#include "text/bpe.h"
#include "text/bpe_files.h"
#include "train/induction_corpus.h"
#include "vk/check.h"

namespace attn {

static constexpr size_t MAX_CORPUS_BYTES = 100ull << 20;  // 100 MiB: 4 bytes a token on the GPU

bool decode_utf8(const std::string& s, std::vector<uint32_t>& out, size_t* bad) {
    out.clear();
    out.reserve(s.size());
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    size_t n = s.size(), i = 0;
    while (i < n) {
        uint32_t c = p[i];
        int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (len == 0 || i + len > n) { if (bad) *bad = i; return false; }
        uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
        for (int k = 1; k < len; k++) {
            if ((p[i + k] & 0xC0) != 0x80) { if (bad) *bad = i; return false; }
            cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        static const uint32_t min_for_len[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_for_len[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) { if (bad) *bad = i; return false; }
        out.push_back(cp);
        i += len;
    }
    return true;
}

std::string encode_utf8(uint32_t cp) {
    std::string s;
    if (cp < 0x80) s += char(cp);
    else if (cp < 0x800) { s += char(0xC0 | (cp >> 6)); s += char(0x80 | (cp & 0x3F)); }
    else if (cp < 0x10000) { s += char(0xE0 | (cp >> 12)); s += char(0x80 | ((cp >> 6) & 0x3F)); s += char(0x80 | (cp & 0x3F)); }
    else { s += char(0xF0 | (cp >> 18)); s += char(0x80 | ((cp >> 12) & 0x3F)); s += char(0x80 | ((cp >> 6) & 0x3F)); s += char(0x80 | (cp & 0x3F)); }
    return s;
}

Dataset Dataset::from_file(const std::string& path) {
    namespace fs = std::filesystem;
    uint64_t seed = 0;
    if (parse_induction_corpus(path, &seed)) return from_text(induction_text(seed), path);  // generated, not read
    std::error_code ec;
    if (!fs::exists(path, ec))
        throw Error("corpus '" + path + "' does not exist: pass a UTF-8 text file with --data FILE, or run scripts/setup.sh to fetch tiny Shakespeare");
    if (fs::is_directory(path, ec))
        throw Error("corpus '" + path + "' is a directory: pass a UTF-8 text file with --data FILE");
    bool regular = fs::is_regular_file(path, ec);
    if (regular) {
        auto size = fs::file_size(path, ec);
        if (ec) throw Error("cannot read corpus '" + path + "': " + ec.message());
        if (size > MAX_CORPUS_BYTES)
            throw Error("corpus '" + path + "' is " + std::to_string(size) + " bytes, more than the limit of 100 MiB (" +
                        std::to_string(MAX_CORPUS_BYTES) + " bytes): use a smaller text file");
    }
    // a regular file or a pipe (--data /dev/stdin, <(command), a FIFO), read to its end or until past the limit
    // (from_text refuses it); a read that fails (EIO) is "cannot read 'PATH': Input/output error"
    std::string text = read_file(path, "corpus", MAX_CORPUS_BYTES);
    return from_text(text, path);
}

Dataset Dataset::from_file(const std::string& path, const std::string& tokenizer) {
    if (tokenizer.empty() || tokenizer == "chars") return from_file(path);
    if (tokenizer.rfind("bpe:", 0) == 0) {
        char* end = nullptr;
        long n = std::strtol(tokenizer.c_str() + 4, &end, 10);
        if (tokenizer.size() == 4 || *end != '\0' || n < 257 || n > 65536)
            throw Error("--tokenizer " + tokenizer + ": give bpe:N, N the vocabulary from 257 to 65536 (256 bytes and "
                        "N - 256 merges learned on the corpus), e.g. bpe:512");
        Dataset chars = from_file(path);  // the corpus's checks, and its text back
        std::string text = chars.decode(chars.tokens());
        auto bpe = std::make_shared<const BpeTokenizer>(learn_bpe(text, int(n)));
        return from_text(text, path, bpe);
    }
    return from_file(path, std::make_shared<const BpeTokenizer>(load_bpe_tokenizer(tokenizer)));
}

Dataset Dataset::from_file(const std::string& path, std::shared_ptr<const BpeTokenizer> bpe) {
    Dataset chars = from_file(path);
    return from_text(chars.decode(chars.tokens()), path, std::move(bpe));
}

Dataset Dataset::from_text(const std::string& text, const std::string& name, std::shared_ptr<const BpeTokenizer> bpe) {
    Dataset d = from_text(text, name);  // the checks, and the character count
    if (!bpe) return d;
    size_t n_chars = d.m_tokens.size();
    std::vector<int> ids = bpe->encode(text);
    d.m_tokens.assign(ids.begin(), ids.end());
    d.m_chars = std::move(d.m_vocab);
    d.m_vocab.clear();
    d.m_bpe = std::move(bpe);
    d.m_tiny_shakespeare = false;  // the lecture's losses are per character: not comparable with these
    d.m_chars_per_token = d.m_tokens.empty() ? 1.0 : double(n_chars) / double(d.m_tokens.size());
    d.m_n_train = size_t(0.9 * double(d.m_tokens.size()));
    return d;
}

int Dataset::vocab_size() const { return m_bpe ? m_bpe->vocab_size() : int(m_vocab.size()); }

Dataset Dataset::from_text(const std::string& text, const std::string& name) {
    if (text.empty()) throw Error("corpus '" + name + "' is empty: give it some text to learn from");
    if (text.size() > MAX_CORPUS_BYTES)
        throw Error("corpus '" + name + "' is more than the limit of 100 MiB (" + std::to_string(MAX_CORPUS_BYTES) +
                    " bytes): use a smaller text file");
    if (text.find('\0') != std::string::npos)
        throw Error("corpus '" + name + "' looks binary (it contains NUL bytes): pass a UTF-8 text file");
    Dataset d;
    d.m_name = name;
    d.m_bytes = text.size();
    // tiny Shakespeare: its size and FNV-1a 64 of its bytes (the file whose sha256 scripts/setup.sh checks)
    if (text.size() == 1115394) {
        uint64_t h = 0xcbf29ce484222325ull;
        for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
        d.m_tiny_shakespeare = h == 0x4016c93c3be74c18ull;
    }
    std::vector<uint32_t> cps;
    size_t bad = 0;
    if (!decode_utf8(text, cps, &bad))
        throw Error("corpus '" + name + "' is not valid UTF-8 (first bad byte at offset " + std::to_string(bad) +
                    "): convert it, e.g. with 'iconv -f latin1 -t utf-8'");
    d.m_vocab = cps;
    std::sort(d.m_vocab.begin(), d.m_vocab.end());
    d.m_vocab.erase(std::unique(d.m_vocab.begin(), d.m_vocab.end()), d.m_vocab.end());
    if (d.m_vocab.size() < 2)
        throw Error("corpus '" + name + "' has only one distinct character: there is nothing to predict; use a real text");
    d.m_tokens.resize(cps.size());
    for (size_t i = 0; i < cps.size(); i++)
        d.m_tokens[i] = uint32_t(std::lower_bound(d.m_vocab.begin(), d.m_vocab.end(), cps[i]) - d.m_vocab.begin());
    d.m_n_train = size_t(0.9 * double(d.m_tokens.size()));  // the lecture's n = int(0.9*len(data))
    return d;
}

void Dataset::check_block_size(int block_size, bool flag) const {
    size_t need = size_t(block_size) + 1;
    if (n_train() < need || n_val() < need)
        throw Error("corpus '" + m_name + "' is too short for block size " + std::to_string(block_size) + ": its " +
                    std::to_string(n_val()) + "-character validation split needs at least " + std::to_string(need) +
                    " (use a longer text, about " + std::to_string(need * 10) + " characters" +
                    (flag ? ", or a smaller --block-size)" : ")"));
}

std::vector<uint32_t> Dataset::encode(const std::string& s) const {
    if (m_bpe) {
        std::vector<int> v = m_bpe->encode(s);
        return std::vector<uint32_t>(v.begin(), v.end());
    }
    std::vector<uint32_t> cps, ids;
    if (!decode_utf8(s, cps, nullptr)) return ids;
    for (uint32_t c : cps) {
        auto it = std::lower_bound(m_vocab.begin(), m_vocab.end(), c);
        if (it != m_vocab.end() && *it == c) ids.push_back(uint32_t(it - m_vocab.begin()));
    }
    return ids;
}

bool Dataset::knows(uint32_t c) const { return m_bpe || std::binary_search(m_vocab.begin(), m_vocab.end(), c); }

std::string Dataset::unknown_chars(const std::string& s) const {
    if (m_bpe) return "";  // every byte is a token
    std::vector<uint32_t> cps, seen;
    if (!decode_utf8(s, cps, nullptr)) return "(all of it: not valid UTF-8)";  // encode() skips it all
    std::string out;
    for (uint32_t c : cps)
        if (!knows(c) && std::find(seen.begin(), seen.end(), c) == seen.end()) {
            seen.push_back(c);
            out += encode_utf8(c);
        }
    return out;
}

std::string Dataset::decode(uint32_t id) const {
    if (m_bpe) return int(id) < m_bpe->vocab_size() ? m_bpe->token(int(id)) : std::string("?");
    return id < m_vocab.size() ? encode_utf8(m_vocab[id]) : std::string("?");
}

std::string Dataset::decode(const std::vector<uint32_t>& ids) const {
    std::string s;
    for (uint32_t id : ids) s += decode(id);
    return s;
}

}  // namespace attn
