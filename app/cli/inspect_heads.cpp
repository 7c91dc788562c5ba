// `attnlab inspect --heads`: every head's scores at a step, as a table (inspect_heads.h).
#include "inspect_heads.h"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "cli.h"
#include "inspect_run.h"
#include "train/head_scores.h"
#include "train/session.h"

namespace attn {

namespace {

constexpr double k_importance_flop = 2e11;  // --heads computes importance up to this much work (seconds on a CPU)

// The recorded step nearest r.step (null without --step), after checking the time-lapse can give it.
const ProbeSnapshot* recorded_step(const HeadsRequest& r, const TimeLapse& tl) {
    const ProbeSnapshot* at = checked_step(r.file, tl, r.has_step, r.step, "score the heads at its weights");
    if (at && !tl.has_weights())
        throw Error(r.file + " was saved before the time-lapse kept its weights: the induction probes cannot be "
                    "computed at a step (leave out --step to score the heads at the checkpoint's weights)");
    return at;
}

// A score with three decimals, or "-" where the text gave the head nowhere to look (no repeated character).
std::string score(double v) {
    if (!std::isfinite(v)) return "-";
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return buf;
}

// The text the heads are scored on: --probe's, else the time-lapse's probe, else the default probe.
std::vector<uint32_t> text_tokens(const HeadsRequest& r, const Dataset& data, const TimeLapse& tl, int block_size) {
    if (!r.has_probe && !tl.empty()) return tl.tokens();
    std::string note;
    std::string text = r.has_probe ? r.probe : Session::default_probe(data, block_size);
    std::vector<uint32_t> tokens = Session::probe_tokens(data, text, block_size, &note);
    if (!note.empty()) std::fprintf(stderr, "attnlab: %s\n", note.c_str());
    return tokens;
}

// The vocabulary the induction probes draw from: the characters, or the BPE tokens that are no blank.
std::vector<uint32_t> probe_vocab(const Dataset& data) {
    return data.bpe() ? bpe_probe_vocab(*data.bpe()) : data.vocab();
}

// What the scores were measured on: the text, and the induction probes.
void print_texts(const Dataset& data, const std::vector<uint32_t>& text, int block_size) {
    int n = int(induction_probe(probe_vocab(data), block_size, k_induction_probe_seed).size()) / 2;
    const char* units = data.bpe() ? "tokens" : "characters";
    std::printf("previous, duplicate, first, current, entropy: on \"%s\" (%zu %s); induction: on %d random "
                "strings of %d %s written twice (seeds %llu to %llu)\n",
                one_line(data.decode(text)).c_str(), text.size(), units, k_induction_probes, n, units,
                static_cast<unsigned long long>(k_induction_probe_seed),
                static_cast<unsigned long long>(k_induction_probe_seed + k_induction_probes - 1));
    std::printf("(each score: the share of the head's attention on that pattern; docs/induction.md)\n\n");
}

// importance: (L * NH,) the validation loss's increase with each head knocked out alone, or empty (not computed)
void print_table(const std::vector<HeadScores>& scores, int NH, const std::vector<double>& importance) {
    std::printf("%-8s %9s %10s %10s %7s %8s %8s %10s  %s\n", "head", "previous", "duplicate", "induction", "first",
                "current", "entropy", "importance", "label");
    int best = 0;
    for (size_t k = 0; k < scores.size(); k++) {
        const HeadScores& s = scores[k];
        char name[32];
        std::snprintf(name, sizeof name, "L%d H%d", int(k) / NH + 1, int(k) % NH + 1);
        char imp[32] = "-";
        if (k < importance.size()) std::snprintf(imp, sizeof imp, "%+.4f", importance[k]);
        std::printf("%-8s %9s %10s %10s %7s %8s %8.4f %10s  %s\n", name, score(s.previous).c_str(),
                    score(s.duplicate).c_str(), score(s.induction).c_str(), score(s.first).c_str(),
                    score(s.current).c_str(), s.entropy, imp, s.label.empty() ? "-" : s.label.c_str());
        double b = scores[size_t(best)].induction;
        if (std::isnan(b) ? !std::isnan(s.induction) : s.induction > b) best = int(k);
    }
    if (std::isnan(scores[size_t(best)].induction))
        std::printf("strongest induction head: none (a block this short has no room for a repeat)\n");
    else
        std::printf("strongest induction head: L%d H%d score %.3f\n", best / NH + 1, best % NH + 1,
                    scores[size_t(best)].induction);
}

}  // namespace

int inspect_heads(const HeadsRequest& r) {
    if (r.other_view)
        throw Error("--heads prints every head's scores on its own: leave out --list, --layer, --head, --sample, "
                    "--ablate and --icl");
    Checkpoint loaded = load_checkpoint(r.file);
    if (loaded.config.kind == ModelKind::Bigram)
        throw Error("the bigram model has no attention: there are no heads to score (--heads needs a transformer's "
                    "run)");
    recorded_step(r, loaded.timelapse);  // its errors before the corpus is read
    OpenRun run(std::move(loaded));
    const Checkpoint& ck = run.ck;
    const Config& c = ck.config;
    const TimeLapse& tl = ck.timelapse;
    const ProbeSnapshot* recorded = recorded_step(r, tl);
    const Dataset& data = run.open_corpus(r.data);
    std::vector<uint32_t> text = text_tokens(r, data, tl, c.block_size);
    // importance takes a forward pass of the fixed validation batches for every head: computed where that is quick
    const int batches = std::clamp(c.eval_iters, 1, 20);
    const double flop = 2.0 * double(make_layout(c, data.vocab_size()).flat) * c.batch_size * c.block_size * batches *
                        (c.n_layer * c.n_head + 1);
    const bool with_importance = flop <= k_importance_flop;
    // one sequence at a time without importance: the training batch's buffers need not be made
    Session& session = run.start(r.device, with_importance ? c.batch_size : 1);
    AttentionOf attention_of = [&](const std::vector<uint32_t>& tokens) {
        return recorded ? session.view_at(recorded->step, tokens) : session.trainer().probe(tokens);
    };
    // the recorded probe's views at a recorded step are there already
    const ProbeSnapshot* text_view = recorded && text == tl.tokens() ? recorded : nullptr;
    std::vector<HeadScores> scores =
        score_heads(attention_of, text, text_view, probe_vocab(data), c.block_size, c.n_layer, c.n_head, c.causal);

    std::string at = recorded ? "at step " + std::to_string(recorded->step) + " (the weights recorded there)"
                              : "at the checkpoint's weights (step " + std::to_string(ck.state.step) + ")";
    std::printf("%s: preset %s (%s), head scores %s\n", r.file.c_str(), c.preset.c_str(), c.describe().c_str(),
                at.c_str());
    print_texts(data, text, c.block_size);
    std::vector<double> importance;
    if (with_importance) {
        importance = session.head_importance(recorded ? recorded->step : -1, AblationMode::Zero);
        std::printf("importance: the validation loss's increase with the head alone knocked out (zero ablation; %d "
                    "fixed validation batches of %d; docs/circuits.md)\n\n", session.fixed_batches(), c.batch_size);
    } else {
        std::printf("importance: not computed for a model this size (%.0f GFLOP); attnlab inspect --ablate L:H knocks "
                    "one head out\n\n", flop * 1e-9);
    }
    print_table(scores, c.n_head, importance);
    return 0;
}

}  // namespace attn
