// Byte-level BPE (engine/text): the pre-tokenizer's pieces (expected values from tests/reference/gpt2_bpe.py), strict
// UTF-8, the heap merge against encoder.py's loop written out here, learning, round trips and refused vocabularies.
// tests/bpe_test.sh compares whole texts with the Python reference and GPT-2's own files.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "corpus.h"
#include "text/bpe.h"
#include "text/bpe_files.h"
#include "gpu.h"
#include "text/unicode.h"
#include "train/checkpoint.h"
#include "train/dataset.h"
#include "train/session.h"
#include "vk/check.h"

using namespace attn;

namespace {

std::vector<std::string> pieces(const std::string& s) {
    std::vector<std::string> out;
    for (auto p : pretokenize(s)) out.emplace_back(p);
    return out;
}

// encoder.py's bpe(): the lowest-ranked pair, every occurrence left to right, until none has a rank
std::vector<int> naive_encode_piece(const BpeTokenizer& t, const std::string& piece) {
    std::vector<int> byte_id(256);
    for (int i = t.vocab_size() - 1; i >= 0; --i)
        if (t.token(i).size() == 1) byte_id[uint8_t(t.token(i)[0])] = i;
    std::vector<int> w;
    for (char c : piece) w.push_back(byte_id[uint8_t(c)]);
    while (w.size() > 1) {
        int best = -1;
        for (size_t i = 0; i + 1 < w.size(); ++i)
            for (int r = 0; r < t.n_merges(); ++r)
                if (t.merges()[size_t(r)].left == w[i] && t.merges()[size_t(r)].right == w[i + 1]) {
                    if (best < 0 || r < best) best = r;
                    break;
                }
        if (best < 0) break;
        const BpeMerge& m = t.merges()[size_t(best)];
        std::vector<int> o;
        for (size_t i = 0; i < w.size(); ++i) {
            if (i + 1 < w.size() && w[i] == m.left && w[i + 1] == m.right) o.push_back(m.result), ++i;
            else o.push_back(w[i]);
        }
        w = o;
    }
    return w;
}

std::string random_bytes(std::mt19937& rng, size_t n, bool ascii_heavy) {
    std::string s;
    std::uniform_int_distribution<int> any(0, 255), letter(0, 9);
    for (size_t i = 0; i < n; ++i) s += ascii_heavy && letter(rng) < 8 ? "ab cdab\n"[letter(rng) % 8] : char(any(rng));
    return s;
}

}  // namespace

TEST_CASE("pretokenize splits as GPT-2's pattern does", "[bpe]") {
    using V = std::vector<std::string>;
    CHECK(pieces("Hello world") == V{"Hello", " world"});
    CHECK(pieces("  two  spaces") == V{" ", " two", " ", " spaces"});
    CHECK(pieces("it's 'sup I'M") == V{"it", "'s", " '", "sup", " I", "'", "M"});
    CHECK(pieces("a\n\nb") == V{"a", "\n", "\n", "b"});
    CHECK(pieces("x  \n y") == V{"x", "  \n", " y"});
    CHECK(pieces("123abc 4 5") == V{"123", "abc", " 4", " 5"});
    CHECK(pieces("\xE2\x82\xAC" "100!! ?") == V{"\xE2\x82\xAC", "100", "!!", " ?"});
    CHECK(pieces("end  ") == V{"end", "  "});
    CHECK(pieces("\tTab") == V{"\t", "Tab"});
    CHECK(pieces("na\xC3\xAFve caf\xC3\xA9") == V{"na\xC3\xAFve", " caf\xC3\xA9"});
    CHECK(pieces("\xC2\xA0nb") == V{"\xC2\xA0", "nb"});
    CHECK(pieces("") == V{});
    // invalid bytes are characters of no class: they join the punctuation run
    CHECK(pieces("a\xFF\xFE!b") == V{"a", "\xFF\xFE!", "b"});
}

TEST_CASE("strict UTF-8: what Python's decoder rejects is one invalid byte", "[bpe]") {
    auto len = [](const std::string& s) {
        uint32_t cp = 0;
        return utf8_next(reinterpret_cast<const unsigned char*>(s.data()), s.size(), &cp);
    };
    CHECK(len("A") == 1);
    CHECK(len("\xC3\xA9") == 2);
    CHECK(len("\xE2\x82\xAC") == 3);
    CHECK(len("\xF0\x9F\xA4\x97") == 4);
    CHECK(len("\xC0\xAF") == 0);          // overlong
    CHECK(len("\xE0\x80\xAF") == 0);      // overlong
    CHECK(len("\xED\xA0\x80") == 0);      // a surrogate
    CHECK(len("\xF4\x90\x80\x80") == 0);  // past U+10FFFF
    CHECK(len("\xE2\x82") == 0);          // cut short
    CHECK(len("\x80") == 0);              // a stray continuation
    CHECK(char_class(0x4E2D) == CharClass::letter);  // 中
    CHECK(char_class(0x0663) == CharClass::number);  // Arabic-Indic three
    CHECK(char_class(0x3000) == CharClass::space);   // ideographic space
    CHECK(char_class(0x1F917) == CharClass::other);  // 🤗
}

TEST_CASE("learned merges: the most frequent pair, ties to the smallest ids", "[bpe]") {
    // pieces "ab", " ab", " ab": (a,b) x3 first, then (' ', ab) x2; then no pair is left and learning stops
    BpeTokenizer t = learn_bpe("ab ab ab", 300);
    REQUIRE(t.n_merges() == 2);
    CHECK(t.merges()[0].left == 'a');
    CHECK(t.merges()[0].right == 'b');
    CHECK(t.merges()[1].left == ' ');
    CHECK(t.merges()[1].right == 256);
    CHECK(t.vocab_size() == 258);
    CHECK(t.encode("ab ab") == std::vector<int>{256, 257});
    // a tie: (x,y) and (y,x) once each in "xyx"; (x,y) = (120, 121) is the smaller
    BpeTokenizer u = learn_bpe("xyx", 257);
    REQUIRE(u.n_merges() == 1);
    CHECK(u.merges()[0].left == 'x');
    CHECK(u.merges()[0].right == 'y');
    CHECK_THROWS_WITH(learn_bpe("abc", 100), Catch::Contains("256 to 1048576"));
}

TEST_CASE("the heap merge equals encoder.py's loop; decode(encode(x)) = x for any bytes", "[bpe]") {
    std::mt19937 rng(7);
    std::string corpus;
    for (int i = 0; i < 40; ++i) corpus += random_bytes(rng, 200, true) + " the cat sat on the mat, aaaa bbbb aaaaaaa ";
    BpeTokenizer t = learn_bpe(corpus, 400);
    REQUIRE(t.n_merges() > 100);
    for (int trial = 0; trial < 200; ++trial) {
        std::string s = random_bytes(rng, size_t(trial % 50 + 1), trial % 3 != 0);
        std::vector<int> got;
        for (auto p : pretokenize(s)) {
            std::vector<int> heap;
            t.encode_piece(p, heap);
            REQUIRE(heap == naive_encode_piece(t, std::string(p)));
            got.insert(got.end(), heap.begin(), heap.end());
        }
        CHECK(got == t.encode(s));
        CHECK(t.decode(got) == s);
    }
    std::string long_run(5000, 'a');  // one long piece: n log n
    CHECK(t.decode(t.encode(long_run)) == long_run);
    CHECK_THROWS_WITH(t.decode({t.vocab_size()}), Catch::Contains("outside the vocabulary"));
}

TEST_CASE("a vocabulary that is not byte-level BPE is refused, naming what is wrong", "[bpe]") {
    std::vector<std::string> bytes;
    for (int b = 0; b < 256; ++b) bytes.emplace_back(1, char(b));
    auto with = [&](std::vector<std::string> extra) {
        auto v = bytes;
        v.insert(v.end(), extra.begin(), extra.end());
        return v;
    };
    CHECK_NOTHROW(BpeTokenizer(with({"ab", "abc"}), {{'a', 'b', 256}, {256, 'c', 257}}, -1));
    CHECK_THROWS_WITH(BpeTokenizer(with({"ab", "abc"}), {{256, 'c', 257}, {'a', 'b', 256}}, -1),
                      Catch::Contains("merge 1") && Catch::Contains("out of order"));
    CHECK_THROWS_WITH(BpeTokenizer(with({"ab"}), {{'a', 'c', 256}}, -1), Catch::Contains("not its two parts joined"));
    CHECK_THROWS_WITH(BpeTokenizer(with({"ab"}), {{'a', 'b', 999}}, -1), Catch::Contains("outside the vocabulary"));
    CHECK_THROWS_WITH(BpeTokenizer({"a", "b"}, {}, -1), Catch::Contains("no token for byte 0"));
    CHECK_THROWS_WITH(parse_llmc_tokenizer(std::string(100, '\0'), "t.bin"), Catch::Contains("shorter than"));
    CHECK_THROWS_WITH(parse_gpt2_files("[1,2]", "", "e.json", "v.bpe"), Catch::Contains("not an object"));
}

TEST_CASE("GPT-2's files: a known sentence, the special token, and llm.c's .bin recovering the same merges", "[bpe]") {
    const char* env = std::getenv("ATTN_GPT2");
    std::string dir = env ? env : "";
    if (dir.empty() || !std::filesystem::exists(dir + "/encoder.json")) {
        WARN("ATTN_GPT2 names no folder with GPT-2's encoder.json (scripts/setup.sh fetches it): skipped");
        return;
    }
    BpeTokenizer t = load_bpe_tokenizer(dir);
    CHECK(t.vocab_size() == 50257);
    CHECK(t.n_merges() == 50000);
    CHECK(t.eot() == 50256);
    CHECK(t.encode("Hello world") == std::vector<int>{15496, 995});
    CHECK(t.encode("<|endoftext|>", true) == std::vector<int>{50256});
    CHECK(t.encode("<|endoftext|>", false).size() > 1);
    // llm.c's layout written from these tokens reads back to the same merges
    std::string bin(1024, '\0');
    int32_t h[4] = {20240328, 2, t.vocab_size(), t.eot()};
    std::memcpy(bin.data(), h, sizeof h);
    for (int i = 0; i < t.vocab_size(); ++i) bin += char(t.token(i).size()) + t.token(i);
    BpeTokenizer u = parse_llmc_tokenizer(bin, "gpt2_tokenizer.bin");
    REQUIRE(u.n_merges() == t.n_merges());
    for (int r = 0; r < t.n_merges(); ++r) {
        const BpeMerge &a = t.merges()[size_t(r)], &b = u.merges()[size_t(r)];
        REQUIRE((a.left == b.left && a.right == b.right && a.result == b.result));
    }
}

TEST_CASE("a corpus read as BPE tokens trains, and its checkpoint keeps the tokenizer", "[bpe]") {
    std::string text;
    for (int i = 0; i < 300; ++i) text += "the cat sat on the mat; the dog sat on the log. caf\xC3\xA9 \xE4\xB8\xAD\n";
    auto bpe = std::make_shared<const BpeTokenizer>(learn_bpe(text, 300));
    Dataset d = Dataset::from_text(text, "cats", bpe);
    const int V = bpe->vocab_size();  // learning stops early when no pair is left: fewer than asked here
    REQUIRE(V > 256);
    REQUIRE(d.vocab_size() == V);
    CHECK(d.vocab().empty());
    CHECK(d.decode(d.tokens()) == text);  // the corpus's bytes, whole
    CHECK(d.chars_per_token() > 2.0);     // merges joined characters
    CHECK(d.unknown_chars("\xF0\x9F\xA4\x97") == "");  // every byte has a token
    const std::vector<int> ids = bpe->encode("the cat");
    CHECK(d.encode("the cat") == std::vector<uint32_t>(ids.begin(), ids.end()));

    Config c;
    c.apply_preset("single-head");
    c.batch_size = 4;
    Session run(test::ctx(), d, c, 1);
    float first = run.trainer().step().loss, last = first;
    for (int i = 0; i < 30; ++i) last = run.trainer().step().loss;
    CHECK(last < first);
    std::string path = test::temp_path("bpe.safetensors");
    run.save(path);
    Checkpoint ck = load_checkpoint(path);
    std::filesystem::remove(path);
    REQUIRE(ck.tokenizer);
    CHECK(ck.vocab.empty());
    CHECK(checkpoint_vocab_size(ck) == V);
    REQUIRE(ck.tokenizer->n_merges() == bpe->n_merges());
    for (int r = 0; r < bpe->n_merges(); ++r) {
        const BpeMerge &a = bpe->merges()[size_t(r)], &b = ck.tokenizer->merges()[size_t(r)];
        REQUIRE((a.left == b.left && a.right == b.right && a.result == b.result));
    }
    for (int id = 0; id < V; ++id) REQUIRE(ck.tokenizer->token(id) == bpe->token(id));
    // the run resumes on the same tokens; a character reading of the corpus is refused with what to do
    CHECK_NOTHROW(check_resumable(ck, d.vocab(), nullptr));
    Dataset chars = Dataset::from_text(text, "cats");
    CHECK_THROWS_WITH(check_resumable(ck, chars.vocab(), nullptr), Catch::Contains("--headless --resume"));
}
