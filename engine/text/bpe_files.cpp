// Reading GPT-2's and llm.c's tokenizer files into a BpeTokenizer; every size checked against the file.
#include "text/bpe_files.h"

#include <array>
#include <climits>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "io/files.h"
#include "text/unicode.h"
#include "vk/check.h"

namespace attn {

namespace fs = std::filesystem;

const uint32_t* gpt2_byte_to_unicode() {
    static const auto table = [] {
        std::array<uint32_t, 256> t{};
        uint32_t next = 256;
        for (uint32_t b = 0; b < 256; ++b) {
            bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            t[b] = printable ? b : next++;
        }
        return t;
    }();
    return table.data();
}

// A token in the bytes-to-unicode alphabet back to its bytes; false on a character outside the alphabet.
static bool unmap_token(const std::string& s, std::string& out) {
    static const auto inverse = [] {
        std::unordered_map<uint32_t, uint8_t> m;
        for (int b = 0; b < 256; ++b) m[gpt2_byte_to_unicode()[b]] = uint8_t(b);
        return m;
    }();
    out.clear();
    auto* p = reinterpret_cast<const unsigned char*>(s.data());
    for (size_t i = 0; i < s.size();) {
        uint32_t cp = 0;
        size_t n = utf8_next(p + i, s.size() - i, &cp);
        if (n == 0) return false;
        auto it = inverse.find(cp);
        if (it == inverse.end()) return false;
        out += char(it->second);
        i += n;
    }
    return true;
}

static constexpr size_t k_max_file = 256u << 20;  // a tokenizer file larger than this is not one

static std::string read_limited(const std::string& path, const char* what) {
    std::string s = read_file(path, what, k_max_file);
    if (s.size() > k_max_file) throw Error(std::string(what) + " '" + path + "' is over 256 MiB: not a tokenizer file");
    return s;
}

BpeTokenizer parse_gpt2_files(const std::string& encoder_json, const std::string& vocab_bpe,
                              const std::string& json_name, const std::string& bpe_name) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(encoder_json);
    } catch (const nlohmann::json::exception& e) {
        throw Error("'" + json_name + "' is not JSON (" + e.what() + ")");
    }
    if (!j.is_object() || j.empty()) throw Error("'" + json_name + "' is not an object of tokens and their ids");
    const size_t V = j.size();
    std::vector<std::string> tokens(V);
    std::vector<char> seen(V, 0);
    std::unordered_map<std::string, int> ids;  // bytes -> id
    int eot = -1;
    std::string bytes;
    for (auto& [key, value] : j.items()) {
        if (!value.is_number_integer() || value.get<long long>() < 0 || value.get<long long>() >= (long long)V)
            throw Error("'" + json_name + "': the id of '" + key + "' is not a number from 0 to " + std::to_string(V - 1) +
                        " (ids must number the tokens without gaps)");
        int id = value.get<int>();
        if (seen[size_t(id)]) throw Error("'" + json_name + "': id " + std::to_string(id) + " is given twice");
        seen[size_t(id)] = 1;
        if (key == "<|endoftext|>") {
            eot = id;
            tokens[size_t(id)] = key;
            continue;
        }
        if (!unmap_token(key, bytes) || bytes.empty())
            throw Error("'" + json_name + "': the token '" + key + "' is not written in GPT-2's byte alphabet");
        tokens[size_t(id)] = bytes;
        ids.emplace(bytes, id);
    }
    std::vector<BpeMerge> merges;
    size_t line_no = 0;
    for (size_t at = 0; at < vocab_bpe.size();) {
        size_t end = vocab_bpe.find('\n', at);
        if (end == std::string::npos) end = vocab_bpe.size();
        std::string line = vocab_bpe.substr(at, end - at);
        at = end + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || (line_no == 1 && line.rfind("#version", 0) == 0)) continue;
        size_t sp = line.find(' ');
        std::string where = "'" + bpe_name + "' line " + std::to_string(line_no);
        if (sp == std::string::npos || sp == 0 || sp + 1 >= line.size() || line.find(' ', sp + 1) != std::string::npos)
            throw Error(where + " is not two tokens separated by one space");
        std::string a, b;
        if (!unmap_token(line.substr(0, sp), a) || !unmap_token(line.substr(sp + 1), b))
            throw Error(where + " has a character outside GPT-2's byte alphabet");
        auto ia = ids.find(a), ib = ids.find(b), ic = ids.find(a + b);
        if (ia == ids.end() || ib == ids.end() || ic == ids.end())
            throw Error(where + " merges tokens that '" + json_name + "' does not have (files from different tokenizers?)");
        merges.push_back({ia->second, ib->second, ic->second});
    }
    try {
        return BpeTokenizer(std::move(tokens), std::move(merges), eot);
    } catch (const Error& e) {
        throw Error("'" + bpe_name + "': " + e.what());
    }
}

BpeTokenizer parse_llmc_tokenizer(const std::string& bytes, const std::string& name) {
    constexpr size_t header = 256 * 4;
    if (bytes.size() < header) throw Error("'" + name + "' is shorter than llm.c's tokenizer header (1024 bytes)");
    int32_t h[4];
    std::memcpy(h, bytes.data(), sizeof h);
    if (h[0] != 20240328)
        throw Error("'" + name + "' is not an llm.c tokenizer (its first number is " + std::to_string(h[0]) +
                    ", not 20240328)");
    if (h[1] != 1 && h[1] != 2)
        throw Error("'" + name + "' is llm.c tokenizer version " + std::to_string(h[1]) + "; versions 1 and 2 are known");
    const long long V = h[2];
    // each token takes at least 2 bytes (its length and one byte): a count the file cannot hold is refused first
    if (V < 256 || (unsigned long long)V > (bytes.size() - header) / 2)
        throw Error("'" + name + "' says it holds " + std::to_string(V) + " tokens: " +
                    (V < 256 ? "fewer than the 256 bytes" : "more than its size can hold (truncated?)"));
    int eot = h[1] == 2 ? h[3] : (V == 50257 ? 50256 : -1);
    std::vector<std::string> tokens(static_cast<size_t>(V));
    size_t at = header;
    for (long long i = 0; i < V; ++i) {
        if (at >= bytes.size()) throw Error("'" + name + "' ends at token " + std::to_string(i) + " of " + std::to_string(V));
        size_t len = uint8_t(bytes[at++]);
        if (len == 0) throw Error("'" + name + "': token " + std::to_string(i) + " is empty");
        if (len > bytes.size() - at)
            throw Error("'" + name + "' ends inside token " + std::to_string(i) + " of " + std::to_string(V));
        tokens[size_t(i)] = bytes.substr(at, len);
        at += len;
    }
    if (eot < -1 || eot >= V) throw Error("'" + name + "': its end-of-text id " + std::to_string(eot) + " is not a token");
    // the merges, in id order: the tokenizer so far (bytes and earlier merges) splits token t into exactly two
    std::unordered_map<std::string, int> ids;
    std::vector<int> byte_id(256, -1);
    for (long long t = 0; t < V; ++t)
        if (t != eot && tokens[size_t(t)].size() == 1 && byte_id[uint8_t(tokens[size_t(t)][0])] < 0)
            byte_id[uint8_t(tokens[size_t(t)][0])] = int(t);
    for (int b = 0; b < 256; ++b)
        if (byte_id[b] < 0) throw Error("'" + name + "' has no token for byte " + std::to_string(b));
    std::vector<BpeMerge> merges;
    std::unordered_map<uint64_t, std::pair<int, int>> rank;  // (left, right) -> (rank, result)
    auto key = [](int a, int b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); };
    std::vector<int> word;
    for (long long t = 0; t < V; ++t) {
        const std::string& tok = tokens[size_t(t)];
        if (t == eot || tok.size() == 1) continue;
        word.clear();
        for (char c : tok) word.push_back(byte_id[uint8_t(c)]);
        while (word.size() > 2) {  // encoder.py's loop: the lowest-ranked pair, every occurrence, left to right
            int best = -1, best_rank = INT32_MAX;
            for (size_t i = 0; i + 1 < word.size(); ++i) {
                auto it = rank.find(key(word[i], word[i + 1]));
                if (it != rank.end() && it->second.first < best_rank) best_rank = it->second.first, best = int(i);
            }
            if (best < 0) break;
            int a = word[size_t(best)], b = word[size_t(best) + 1], c = rank[key(a, b)].second;
            size_t o = 0;
            for (size_t i = 0; i < word.size(); ++i) {
                if (i + 1 < word.size() && word[i] == a && word[i + 1] == b) word[o++] = c, ++i;
                else word[o++] = word[i];
            }
            word.resize(o);
        }
        if (word.size() != 2)
            throw Error("'" + name + "': token " + std::to_string(t) + " is not two earlier tokens merged: not a "
                        "BPE vocabulary in merge order");
        rank.emplace(key(word[0], word[1]), std::make_pair(int(merges.size()), int(t)));
        merges.push_back({word[0], word[1], int(t)});
    }
    try {
        return BpeTokenizer(std::move(tokens), std::move(merges), eot);
    } catch (const Error& e) {
        throw Error("'" + name + "': " + e.what());
    }
}

BpeTokenizer load_bpe_tokenizer(const std::string& path) {
    std::error_code ec;
    fs::path p(path);
    if (fs::is_directory(p, ec)) {
        for (auto [js, bpe] : {std::pair{"encoder.json", "vocab.bpe"}, std::pair{"vocab.json", "merges.txt"}})
            if (fs::is_regular_file(p / js, ec) && fs::is_regular_file(p / bpe, ec))
                return load_bpe_tokenizer((p / js).string());
        for (const char* bin : {"gpt2_tokenizer.bin", "tokenizer.bin"})
            if (fs::is_regular_file(p / bin, ec)) return load_bpe_tokenizer((p / bin).string());
        throw Error("the folder '" + path + "' has no tokenizer: give one with encoder.json and vocab.bpe (GPT-2's), "
                    "vocab.json and merges.txt (Hugging Face's) or gpt2_tokenizer.bin (llm.c's)");
    }
    std::string file = p.filename().string();
    auto partner = [&](const char* other) { return (p.parent_path() / other).string(); };
    auto pair_of = [&](const std::string& json, const std::string& bpe) {
        std::string j = read_limited(json, "the tokenizer's vocabulary"), b = read_limited(bpe, "the tokenizer's merges");
        return parse_gpt2_files(j, b, json, bpe);
    };
    if (file == "encoder.json") return pair_of(path, partner("vocab.bpe"));
    if (file == "vocab.bpe") return pair_of(partner("encoder.json"), path);
    if (file == "vocab.json") return pair_of(path, partner("merges.txt"));
    if (file == "merges.txt") return pair_of(partner("vocab.json"), path);
    std::string bytes = read_limited(path, "the tokenizer");
    int32_t magic = 0;
    if (bytes.size() >= 4) std::memcpy(&magic, bytes.data(), 4);
    if (magic == 20240328) return parse_llmc_tokenizer(bytes, path);
    throw Error("'" + path + "' is not a tokenizer Attention Lab reads: give GPT-2's encoder.json (with vocab.bpe "
                "beside it), Hugging Face's vocab.json (with merges.txt) or llm.c's gpt2_tokenizer.bin");
}

}  // namespace attn
