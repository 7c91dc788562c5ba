// Opening a saved run for `attnlab inspect` (inspect_run.h).
#include "inspect_run.h"

#include <filesystem>

#include "cli.h"
#include "text/bpe.h"
#include "train/induction_corpus.h"
#include "train/trainer.h"

namespace attn {

std::string inspect_corpus_path(const std::string& data, const Checkpoint& ck) {
    if (!data.empty()) return data;
    std::error_code ec;
    uint64_t seed = 0;
    bool named = std::filesystem::is_regular_file(ck.corpus, ec) || parse_induction_corpus(ck.corpus, &seed);
    return named ? ck.corpus : default_corpus_path();
}

std::string TokenNames::glyph(int32_t id) const {
    if (bpe) return id >= 0 && id < bpe->vocab_size() ? visible_bytes(bpe->token(id)) : "?";
    if (id < 0 || size_t(id) >= vocab.size()) return "?";
    return visible_bytes(encode_utf8(vocab[size_t(id)]));
}

std::string TokenNames::shown(const std::vector<uint32_t>& tokens, const std::vector<std::string>& chars,
                              const std::vector<uint8_t>& unknown) const {
    std::string s;
    for (size_t t = 0; t < tokens.size(); t++) {
        if (bpe) {
            if (t) s += '|';
            s += glyph(int32_t(tokens[t]));
        } else if (unknown[t]) {
            s.append("\u27e8").append(chars[t]).append("\u27e9");
        } else {
            s += chars[t];
        }
    }
    return s;
}

const Dataset& OpenRun::open_corpus(const std::string& data_flag) {
    const std::string path = inspect_corpus_path(data_flag, ck);
    data.emplace(ck.tokenizer ? Dataset::from_file(path, ck.tokenizer) : Dataset::from_file(path));
    check_resumable(ck, data->vocab(), nullptr);
    return *data;
}

Session& OpenRun::start(int device, int batch_size) {
    Config run = ck.config;
    run.batch_size = batch_size;
    ContextOptions co;
    co.device_index = device;
    co.quiet = true;
    co.cpu_threads = Trainer::cpu_threads_for(run, data->vocab_size());
    ctx = std::make_unique<Context>(co);
    session = std::make_unique<Session>(*ctx, *data, run, 1, &ck);
    return *session;
}

const ProbeSnapshot* checked_step(const std::string& file, const TimeLapse& tl, bool has_step, int step,
                                  const std::string& without) {
    if (!has_step) return nullptr;
    if (tl.empty()) throw Error(file + " holds no attention time-lapse: leave out --step to " + without);
    int first = tl.snapshots().front().step, last = tl.snapshots().back().step;
    if (step < first || step > last)
        throw Error("step " + std::to_string(step) + " is outside the time-lapse (steps " + std::to_string(first) +
                    " to " + std::to_string(last) + "; --list shows them)");
    return tl.nearest(step);
}

}  // namespace attn
