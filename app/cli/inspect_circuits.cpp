// `attnlab inspect --ablate` and `--icl` (inspect_circuits.h).
#include "inspect_circuits.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "cli.h"
#include "inspect_heads.h"
#include "inspect_run.h"
#include "train/ablation.h"
#include "train/session.h"

namespace attn {

namespace {

// The run opened with its own batch size (validation losses on whole batches).
std::unique_ptr<OpenRun> open_run(const CircuitsRequest& r) {
    Checkpoint ck = load_checkpoint(r.file);
    if (ck.config.kind == ModelKind::Bigram)
        throw Error("the bigram model has no attention: there is no head to knock out");
    auto o = std::make_unique<OpenRun>(std::move(ck));
    o->open_corpus(r.data);
    o->start(r.device, o->ck.config.batch_size);
    return o;
}

// The step asked for (-1: the checkpoint's weights), checked against the time-lapse.
int asked_step(const CircuitsRequest& r, const TimeLapse& tl) {
    return checked_step(r.file, tl, r.has_step, r.step, "use its weights") ? r.step : -1;
}

std::string glyph(const std::string& c) {
    if (c == " ") return "\u2423";
    if (c == "\n") return "\u23ce";
    return c;
}

}  // namespace

int inspect_ablate(const CircuitsRequest& r) {
    AblationMode mode;
    if (r.mode == "zero") mode = AblationMode::Zero;
    else if (r.mode == "mean") mode = AblationMode::Mean;
    else throw Error("--ablation " + r.mode + ": zero (a head's output replaced by 0) or mean (by its mean on "
                     "validation batches)");
    std::unique_ptr<OpenRun> o = open_run(r);
    const Config& c = o->ck.config;
    std::vector<HeadId> heads = parse_head_list(r.ablate, c.n_layer, c.n_head);
    Session& s = *o->session;
    const TimeLapse& tl = s.timelapse();
    int step = asked_step(r, tl);
    std::string text, note;
    std::vector<uint32_t> tokens;
    if (r.has_probe) {
        tokens = Session::probe_tokens(*o->data, r.probe, c.block_size, &note, &text);
    } else {
        tokens = tl.tokens();
        text = tl.text();
    }
    if (!note.empty()) std::fprintf(stderr, "attnlab: %s\n", note.c_str());
    Session::Ablation a = s.ablate(step, heads, mode, tokens, text);
    std::printf("%s: preset %s (%s), at %s\n", r.file.c_str(), c.preset.c_str(), c.describe().c_str(),
                step < 0 ? ("the checkpoint's weights (step " + std::to_string(a.step) + ")").c_str()
                         : ("the weights recorded at step " + std::to_string(a.step)).c_str());
    std::printf("knocked out: %s (%s ablation: %s)\n\n", head_list_text(heads).c_str(), ablation_mode_name(mode),
                mode == AblationMode::Zero ? "each head's output replaced by 0"
                                           : "each head's output replaced by its mean over the validation batches");
    std::vector<std::string> chars = probe_chars(tokens, text, o->data->vocab());
    const TokenNames names(o->ck);  // a run of BPE tokens: a row a token
    std::printf("%4s %-4s %8s %8s %8s\n", "pos", names.unit(), "intact", "ablated", "change");
    for (size_t t = 1; t < tokens.size(); t++) {
        float li = a.intact.char_loss[t - 1], la = a.ablated.char_loss[t - 1];
        std::string label = names.bpe ? names.glyph(int32_t(tokens[t])) : glyph(chars[t]);
        std::printf("%4zu %s ", t, label.c_str());
        for (int pad = int(label.size()); pad < (names.bpe ? 12 : 4); pad++) std::printf(" ");  // as %-4s did
        if (std::isnan(li)) std::printf("%8s\n", "no loss");
        else std::printf("%8.3f %8.3f %+8.3f\n", li, la, la - li);
    }
    std::printf("probe loss: intact %.4f, ablated %.4f (%+.4f)\n", a.intact.mean_loss(), a.ablated.mean_loss(),
                a.ablated.mean_loss() - a.intact.mean_loss());
    std::printf("val loss on %d fixed validation batches of %d: intact %.4f\n", s.fixed_batches(), c.batch_size,
                a.val_intact);
    std::printf("ablated val loss: %.4f (%+.4f)\n", a.val_ablated, a.val_ablated - a.val_intact);
    return 0;
}

int inspect_icl(const CircuitsRequest& r) {
    std::unique_ptr<OpenRun> o = open_run(r);
    const Config& c = o->ck.config;
    Session& s = *o->session;
    const TimeLapse& tl = s.timelapse();
    if (tl.empty() || !tl.has_weights())
        throw Error(r.file + " holds no time-lapse with its weights (saved before they were kept): the loss by "
                    "position can only be computed at recorded weights");
    std::vector<std::vector<double>> curves = s.loss_by_position();
    const int T = c.block_size;
    std::printf("%s: preset %s (%s): the validation loss at each position of the block (%d fixed batches of %d), "
                "at every recorded step\n", r.file.c_str(), c.preset.c_str(), c.describe().c_str(), s.fixed_batches(),
                c.batch_size);
    const int a = std::clamp(int(std::ceil(T / 10.0 - T / 20.0)), 0, T - 1);
    const int b = std::clamp(int(std::floor(T / 10.0 + T / 20.0)), a, T - 1), tail = std::max(1, T / 10);
    std::printf("in-context learning score: the mean loss at positions %d to %d (\"early\") minus the mean over the "
                "last %d, %d to %d (\"late\"); positive: later %s are predicted better\n\n",
                a, b, tail, T - tail, T - 1, o->ck.tokenizer ? "tokens" : "characters");
    std::printf("%8s %10s %8s %8s %8s\n", "step", "val loss", "early", "late", "ICL");
    double last_score = 0;
    for (size_t i = 0; i < curves.size(); i++) {
        const std::vector<double>& v = curves[i];
        double mean = 0, early = 0, late = 0;
        for (double x : v) mean += x / T;
        for (int t = a; t <= b; t++) early += v[size_t(t)] / (b - a + 1);
        for (int t = T - tail; t < T; t++) late += v[size_t(t)] / tail;
        last_score = icl_score(v);
        std::printf("%8d %10.4f %8.4f %8.4f %+8.4f\n", tl.snapshots()[i].step, mean, early, late, last_score);
    }
    std::printf("in-context learning score: %.4f\n", last_score);
    return 0;
}

}  // namespace attn
