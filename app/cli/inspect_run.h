// What every `attnlab inspect` view that computes needs: a saved run opened with its corpus, a device and a Session
// built from its weights, and a --step checked against the time-lapse.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "train/checkpoint.h"
#include "train/dataset.h"
#include "train/session.h"
#include "vk/context.h"

namespace attn {

// The corpus a checkpoint's views are computed on: `data` (--data) when given, else the checkpoint's own (a file that
// is there, or the generated induction corpus it names), else the default corpus.
std::string inspect_corpus_path(const std::string& data, const Checkpoint& ck);

// How a run's ids read in inspect's tables: its characters (a space as ␣, a newline as ⏎), or its byte-level BPE
// tokens (text/bpe.h visible_bytes: blanks visible, a partial UTF-8 character as its bytes).
struct TokenNames {
    std::vector<uint32_t> vocab;
    std::shared_ptr<const BpeTokenizer> bpe;
    explicit TokenNames(const Checkpoint& ck) : vocab(ck.vocab), bpe(ck.tokenizer) {}
    std::string glyph(int32_t id) const;  // "?" outside the vocabulary
    // the unit of text one position holds, as the tables name it
    const char* unit() const { return bpe ? "token" : "char"; }
    const char* units() const { return bpe ? "tokens" : "characters"; }
    // The probe as it reads: characters as typed (those the corpus lacks in angle brackets, from `unknown`), or
    // tokens' glyphs separated by | so that their boundaries show.
    std::string shown(const std::vector<uint32_t>& tokens, const std::vector<std::string>& chars,
                      const std::vector<uint8_t>& unknown) const;
};

// A saved run opened for computing: the checkpoint, then its corpus (open_corpus), then (start) a device and a Session built from its
// weights, every recorded step kept (nothing is recorded here).
struct OpenRun {
    Checkpoint ck;
    std::optional<Dataset> data;
    std::unique_ptr<Context> ctx;
    std::unique_ptr<Session> session;

    explicit OpenRun(Checkpoint checkpoint) : ck(std::move(checkpoint)) {}
    // Reads the corpus (inspect_corpus_path), as the run's tokens when it has a tokenizer, and checks that its
    // characters are the checkpoint's vocabulary.
    const Dataset& open_corpus(const std::string& data_flag);
    // Opens the device (-1: the default) and builds the Session with the checkpoint's configuration at batch_size
    // (1: one sequence at a time, the training batch's buffers not made).
    Session& start(int device, int batch_size);
};

// The recorded step nearest `step`, or null without --step (has_step false), after checking the time-lapse of
// `file` holds it; otherwise: throws one line ("leave out --step to <without>" where there is no time-lapse).
const ProbeSnapshot* checked_step(const std::string& file, const TimeLapse& tl, bool has_step, int step,
                                  const std::string& without);

}  // namespace attn
