// The generated induction corpus (induction_corpus.h).
#include "train/induction_corpus.h"

#include <cerrno>
#include <cstdlib>

#include "rng.h"
#include "vk/check.h"

namespace attn {

bool parse_induction_corpus(const std::string& spec, uint64_t* seed) {
    const std::string name = "induction";
    if (spec == name) {
        *seed = k_induction_corpus_seed;
        return true;
    }
    if (spec.rfind(name + ":", 0) != 0) return false;
    std::string v = spec.substr(name.size() + 1);
    char* end = nullptr;
    errno = 0;
    unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || v[0] == '-' || *end != '\0' || errno != 0)
        throw Error("--data " + spec + ": the generated corpus is 'induction' or 'induction:SEED' with SEED a whole "
                    "number (a file of that name: ./" + spec + ")");
    *seed = n;
    return true;
}

std::string induction_text(uint64_t seed) {
    Rng rng(seed);
    std::string text, s;
    text.reserve(size_t(k_induction_lines) * (k_induction_min_len + k_induction_max_len + 1));
    for (int line = 0; line < k_induction_lines; line++) {
        int len = k_induction_min_len + int(rng.below(uint64_t(k_induction_max_len - k_induction_min_len + 1)));
        s.clear();
        for (int k = 0; k < len; k++) s += char('a' + rng.below(26));
        text += s;
        text += s;
        text += '\n';
    }
    return text;
}

}  // namespace attn
