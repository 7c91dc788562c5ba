// Head scores: each detection pattern on hand-made attention maps (a perfect head scores 1, a uniform map its
// expected share), the induction probe, the labels, the induction corpus, and the scores of a trained model's
// attention on the GPU against the CPU twin's.
#include <cmath>
#include <set>

#include "corpus.h"
#include "gpu.h"
#include "reference/model_ref.h"
#include "train/head_scores.h"
#include "train/induction_corpus.h"
#include "train/trainer.h"

using namespace attn;

namespace {

// A causal (P, P) map whose row i is weight(i, j) over j <= i, normalised.
template <typename F> std::vector<float> causal_map(int P, F weight) {
    std::vector<float> a(size_t(P) * P, 0.0f);
    for (int i = 0; i < P; i++) {
        double sum = 0;
        for (int j = 0; j <= i; j++) sum += weight(i, j);
        for (int j = 0; j <= i; j++) a[size_t(i) * P + j] = float(weight(i, j) / sum);
    }
    return a;
}

// n printable characters from '!' on: id -> code point.
std::vector<uint32_t> printable(int n) {
    std::vector<uint32_t> v;
    for (int k = 0; k < n; k++) v.push_back(uint32_t(0x21 + k));
    return v;
}

std::vector<float> uniform_map(int P) {
    return causal_map(P, [](int, int) { return 1.0; });
}

// A snapshot holding maps (L * NH of them, each (P, P), layer-major) in fp16, as Trainer::probe makes them.
ProbeSnapshot snapshot_of(const std::vector<std::vector<float>>& maps) {
    ProbeSnapshot s;
    for (const auto& m : maps)
        for (float w : m) s.att.push_back(float_to_half(w));
    return s;
}

}  // namespace

TEST_CASE("a perfect head of each fixed position scores 1 there", "[heads]") {
    const int P = 8;
    auto prev = causal_map(P, [](int i, int j) { return j == i - 1 || i == 0 ? 1.0 : 0.0; });
    CHECK(previous_score(prev, P) == Approx(1.0));
    CHECK(current_score(prev, P) == Approx(0.0));
    CHECK(first_score(prev, P) == Approx(1.0 / (P - 1)));  // row 1's previous character is the first
    auto cur = causal_map(P, [](int i, int j) { return i == j ? 1.0 : 0.0; });
    CHECK(current_score(cur, P) == Approx(1.0));
    CHECK(previous_score(cur, P) == Approx(0.0));
    auto first = causal_map(P, [](int, int j) { return j == 0 ? 1.0 : 0.0; });
    CHECK(first_score(first, P) == Approx(1.0));
    // row 0 has nowhere else to look: it takes no part (a map that differs only there scores the same)
    auto half = causal_map(P, [](int i, int j) { return j == i || j == i - 1 ? 1.0 : 0.0; });
    CHECK(previous_score(half, P) == Approx(0.5));
    CHECK(current_score(half, P) == Approx(0.5));
}

TEST_CASE("a uniform causal map scores its expected share", "[heads]") {
    const int P = 8;
    auto a = uniform_map(P);
    // previous, current, first: one key of row i's i + 1, over rows 1..P-1 (each row sums to 1)
    double one_key = 0;
    for (int i = 1; i < P; i++) one_key += 1.0 / (i + 1);
    one_key /= P - 1;
    CHECK(previous_score(a, P) == Approx(one_key));
    CHECK(current_score(a, P) == Approx(one_key));
    CHECK(first_score(a, P) == Approx(one_key));
    // x = 0 1 0 1 0 1 0 1: row i >= 2 has floor(i / 2) earlier copies of its character among its i + 1 keys, and
    // as many keys just after one (1 <= j < i, j of the other parity); rows 0 and 1 have neither
    std::vector<uint32_t> x = {0, 1, 0, 1, 0, 1, 0, 1};
    double dup = 0;
    for (int i = 2; i < P; i++) dup += (i / 2) / double(i + 1);
    dup /= P - 2;  // rows 0 and 1 have no earlier copy
    CHECK(duplicate_score(a, x) == Approx(dup));
    CHECK(induction_score(a, x) == Approx(dup));
}

TEST_CASE("duplicate and induction scores on a repeated sequence", "[heads]") {
    // "abcdabcd": from position 4 on each character has one earlier copy, four back; the character after it is
    // three back
    std::vector<uint32_t> x = {0, 1, 2, 3, 0, 1, 2, 3};
    const int P = int(x.size());
    auto induction = causal_map(P, [](int i, int j) { return i >= 4 ? j == i - 3 : j == 0; });
    CHECK(induction_score(induction, x) == Approx(1.0));
    CHECK(duplicate_score(induction, x) == Approx(0.0));
    auto duplicate = causal_map(P, [](int i, int j) { return i >= 4 ? j == i - 4 : j == i; });
    CHECK(duplicate_score(duplicate, x) == Approx(1.0));
    CHECK(induction_score(duplicate, x) == Approx(0.0));
    // half on the induction key, half on the current character: half of each repeated row
    auto mixed = causal_map(P, [](int i, int j) { return j == i || (i >= 4 && j == i - 3) ? 1.0 : 0.0; });
    CHECK(induction_score(mixed, x) == Approx(0.5));
    CHECK(current_score(mixed, P) == Approx((3 + 4 * 0.5) / 7));
    // the induction key needs a character before it: x[j - 1] with j >= 1, never j = i itself
    std::vector<uint32_t> aa = {5, 5};
    CHECK(std::isnan(induction_score(causal_map(2, [](int, int) { return 1.0; }), aa)));  // nowhere to look
    std::vector<uint32_t> abc = {0, 1, 2};  // no repeated character: no duplicate score, rather than a 0
    CHECK(std::isnan(duplicate_score(causal_map(3, [](int, int) { return 1.0; }), abc)));
    CHECK(duplicate_score(causal_map(2, [](int, int j) { return j == 0 ? 1.0 : 0.0; }), aa) == Approx(1.0));
}

TEST_CASE("the induction probe is random characters written twice, the same for a seed", "[heads]") {
    auto p = induction_probe(printable(65), 64, 5400);
    REQUIRE(p.size() == 50);  // 25 characters, twice
    CHECK(std::vector<uint32_t>(p.begin(), p.begin() + 25) == std::vector<uint32_t>(p.begin() + 25, p.end()));
    CHECK(std::set<uint32_t>(p.begin(), p.end()).size() == 25);  // distinct where the vocabulary has 25
    for (uint32_t t : p) CHECK(t < 65);
    CHECK(induction_probe(printable(65), 64, 5400) == p);
    CHECK(induction_probe(printable(65), 64, 5401) != p);
    // shortened to the block: n = T / 2
    auto short8 = induction_probe(printable(27), 8, 1);
    REQUIRE(short8.size() == 8);
    CHECK(std::vector<uint32_t>(short8.begin(), short8.begin() + 4) ==
          std::vector<uint32_t>(short8.begin() + 4, short8.end()));
    CHECK(induction_probe(printable(27), 9, 1).size() == 8);
    // a vocabulary smaller than the half: characters repeat within it, every id still valid
    auto small = induction_probe(printable(3), 64, 2);
    REQUIRE(small.size() == 50);
    for (uint32_t t : small) CHECK(t < 3);
    CHECK(induction_probe(printable(10), 1, 3).size() == 1);
    CHECK(!test::error_of([] { induction_probe({}, 8, 1); }).empty());
    // no line break, space or tab while two other characters remain; only those: they are all there is
    std::vector<uint32_t> text_vocab = {'\t', '\n', ' ', 'a', 'b', 'c'};
    for (uint64_t seed = 0; seed < 20; seed++)
        for (uint32_t t : induction_probe(text_vocab, 64, seed)) CHECK(t >= 3);
    auto blank = induction_probe({'\n', ' '}, 8, 1);
    CHECK(std::set<uint32_t>(blank.begin(), blank.end()) == std::set<uint32_t>{0, 1});
    // a perfect induction head on it scores 1, a previous-character head about 0
    const int P = int(p.size());
    auto perfect = causal_map(P, [](int i, int j) { return i >= 25 ? j == i - 24 : j == i; });
    CHECK(induction_score(perfect, p) == Approx(1.0));
    CHECK(induction_score(causal_map(P, [](int i, int j) { return j == i - 1 || i == 0 ? 1.0 : 0.0; }), p) == 0.0);
}

TEST_CASE("labels name the role a head's scores clear", "[heads]") {
    HeadSummary none, uniform;
    uniform.label = "uniform";
    HeadScores s;
    CHECK(head_label(s, none).empty());
    CHECK(head_label(s, uniform) == "uniform");
    s.previous = 0.6;
    CHECK(head_label(s, uniform) == "previous character");
    s.induction = k_induction_label;
    CHECK(head_label(s, none) == "induction");  // the rarer role first
    s = HeadScores();
    s.duplicate = 0.5;
    CHECK(head_label(s, none) == "duplicate");
    s.first = 0.7;
    CHECK(head_label(s, none) == "first character");
    s.current = 0.9;
    CHECK(head_label(s, none) == "current character");
}

TEST_CASE("score_heads combines the text's maps and the induction probes' per head", "[heads]") {
    const int L = 2, NH = 2, T = 16;
    const std::vector<uint32_t> V = printable(20);
    std::vector<uint32_t> text = {3, 4, 5, 3, 4, 5, 6, 7};
    const int P = int(text.size());
    // layer 1: a previous-character head and a uniform one; layer 2: an induction head and a current-character one
    auto maps_for = [&](const std::vector<uint32_t>& x) {
        int n = int(x.size());
        auto induction = causal_map(n, [&](int i, int j) {
            for (int k = i - 1; k >= 1; k--)
                if (x[size_t(k - 1)] == x[size_t(i)]) return j == k ? 1.0 : 0.0;
            return j == i ? 1.0 : 0.0;  // nowhere to look: the current character
        });
        auto previous = causal_map(n, [](int i, int j) { return j == i - 1 || i == 0; });
        auto current = causal_map(n, [](int i, int j) { return i == j; });
        return std::vector<std::vector<float>>{previous, uniform_map(n), induction, current};
    };
    int calls = 0;
    AttentionOf attention_of = [&](const std::vector<uint32_t>& x) {
        calls++;
        return snapshot_of(maps_for(x));
    };
    auto scores = score_heads(attention_of, text, nullptr, V, T, L, NH, true);
    CHECK(calls == 1 + k_induction_probes);
    REQUIRE(scores.size() == 4);
    CHECK(scores[0].previous == Approx(1.0));
    CHECK(scores[0].label == "previous character");
    CHECK(scores[1].label == "uniform");
    CHECK(scores[2].induction == Approx(1.0).margin(1e-3));
    CHECK(scores[2].label == "induction");
    CHECK(scores[3].current == Approx(1.0));
    CHECK(scores[3].induction == Approx(0.0));
    CHECK(scores[3].label == "current character");
    // entropy as summarize_head gives it on the text
    CHECK(scores[1].entropy == Approx(summarize_head(uniform_map(P), P, true).entropy).epsilon(1e-3));
    // a text view at hand is used as it is: only the probes are computed
    ProbeSnapshot given = snapshot_of(maps_for(text));
    calls = 0;
    auto again = score_heads(attention_of, text, &given, V, T, L, NH, true);
    CHECK(calls == k_induction_probes);
    CHECK(again[0].previous == scores[0].previous);
    CHECK(!test::error_of([&] { score_heads(attention_of, text, nullptr, V, T, 0, 0, true); }).empty());
    // a block of 2 has no room for a repeat: no induction score, the others still there
    auto two = score_heads(attention_of, {3, 4}, nullptr, V, 2, L, NH, true);
    CHECK(std::isnan(two[2].induction));
    CHECK(two[0].previous == Approx(1.0));
    CHECK(two[0].label == "previous character");
}

TEST_CASE("the induction corpus repeats a random string on every line, the same for a seed", "[heads]") {
    uint64_t seed = 0;
    REQUIRE(parse_induction_corpus("induction", &seed));
    CHECK(seed == k_induction_corpus_seed);
    REQUIRE(parse_induction_corpus("induction:42", &seed));
    CHECK(seed == 42);
    CHECK(!parse_induction_corpus("input.txt", &seed));
    CHECK(!parse_induction_corpus("./induction", &seed));
    CHECK(test::error_of([&] { parse_induction_corpus("induction:x", &seed); }).find("induction:SEED") !=
          std::string::npos);
    std::string text = induction_text(42);
    CHECK(text == induction_text(42));
    CHECK(text != induction_text(43));
    size_t lines = 0, at = 0;
    while (at < text.size()) {
        size_t nl = text.find('\n', at);
        REQUIRE(nl != std::string::npos);
        std::string line = text.substr(at, nl - at);
        REQUIRE(line.size() % 2 == 0);
        size_t n = line.size() / 2;
        CHECK(n >= size_t(k_induction_min_len));
        CHECK(n <= size_t(k_induction_max_len));
        CHECK(line.substr(0, n) == line.substr(n));
        at = nl + 1, lines++;
    }
    CHECK(lines == size_t(k_induction_lines));
    Dataset d = Dataset::from_file("induction:42");
    CHECK(d.vocab_size() == 27);  // a-z and the newline
    CHECK(d.name() == "induction:42");
    CHECK(d.decode(d.tokens()) == text);
}

TEST_CASE("scores of the GPU's attention equal the CPU twin's", "[heads]") {
    Dataset data = Dataset::from_text(test::tiny_text(), "tiny");
    Config c;
    c.apply_preset("single-head");
    c.n_head = 2;
    c.n_embd = 16;
    c.head_size = 8;
    c.block_size = 8;
    c.batch_size = 4;
    c.seed = 11;
    Trainer tr(test::ctx(), data, c, 1);
    for (int i = 0; i < 30; i++) tr.step();
    const int T = c.block_size, NH = c.n_head, HS = c.hs(), C = c.n_embd, A = c.attn_dim();
    // the twin's first layer: embeddings, qkv, attention (T, T) per head, in double
    std::vector<double> flat = test::to_d(tr.model().read_params());
    const auto& info = tr.model().params_info();
    auto param = [&](int i) {
        return i < 0 ? std::vector<double>()
                     : std::vector<double>(flat.begin() + long(info[size_t(i)].offset),
                                           flat.begin() + long(info[size_t(i)].offset + info[size_t(i)].count));
    };
    AttentionOf twin = [&](const std::vector<uint32_t>& x) {
        std::vector<uint32_t> toks = x;
        toks.resize(size_t(T), 0);  // past the probe: padding the causal mask hides from its rows
        std::vector<double> emb, qkv, y, att, wpe = param(tr.model().wpe()), b = param(tr.model().blocks()[0].qkv_b);
        ref::embedding_forward(emb, toks, {0}, param(0), &wpe, 1, T, C);
        ref::matmul_forward(qkv, emb, param(tr.model().blocks()[0].qkv), b.empty() ? nullptr : &b, T, 3 * A, C);
        ref::attention_forward(y, att, qkv, 1, T, NH, HS, true);
        int P = int(x.size());
        std::vector<std::vector<float>> maps;
        for (int h = 0; h < NH; h++) {
            std::vector<float> m(size_t(P) * P);
            for (int i = 0; i < P; i++)
                for (int j = 0; j < P; j++) m[size_t(i) * P + j] = float(att[(size_t(h) * T + i) * T + j]);
            maps.push_back(m);
        }
        return snapshot_of(maps);  // fp16 as the GPU's are kept, so both round alike
    };
    AttentionOf gpu = [&](const std::vector<uint32_t>& x) { return tr.probe(x); };
    std::vector<uint32_t> text = data.encode("to be or");
    auto got = score_heads(gpu, text, nullptr, data.vocab(), T, 1, NH, true);
    auto want = score_heads(twin, text, nullptr, data.vocab(), T, 1, NH, true);
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < got.size(); k++) {
        INFO("head " << k);
        CHECK(got[k].previous == Approx(want[k].previous).margin(2e-3));
        CHECK(got[k].duplicate == Approx(want[k].duplicate).margin(2e-3));
        CHECK(got[k].induction == Approx(want[k].induction).margin(2e-3));
        CHECK(got[k].first == Approx(want[k].first).margin(2e-3));
        CHECK(got[k].current == Approx(want[k].current).margin(2e-3));
        CHECK(got[k].entropy == Approx(want[k].entropy).margin(5e-3));
    }
    // a trained head is not uniform: the comparison is not of two constants
    double spread = 0;
    for (const auto& s : want) spread += std::abs(s.previous - s.current);
    CHECK(spread > 0.01);
}
