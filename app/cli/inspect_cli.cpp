// `attnlab inspect`: a checkpoint's probe, its attention, losses and predictions as text (inspect_cli.h).
#include "inspect_cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"
#include "inspect_circuits.h"
#include "inspect_heads.h"
#include "inspect_run.h"
#include "train/session.h"

namespace attn {

namespace {

// Options as the user typed them.
struct InspectOptions {
    std::string file, probe, data, prompt;
    int step = -1, layer = 0, head = 0, device = -1;  // layer, head: from 1
    int sample = 0;          // characters to sample (0: none)
    uint64_t seed = 1337;
    bool list = false, has_step = false, has_probe = false, has_layer = false, has_head = false;
};

// s padded with spaces to `width` characters (UTF-8: one column a code point), on the left (right-aligned) or right.
std::string pad(const std::string& s, int width, bool left = true) {
    int n = 0;
    for (unsigned char ch : s) n += (ch & 0xc0) != 0x80;
    std::string fill(size_t(std::max(0, width - n)), ' ');
    return left ? fill + s : s + fill;
}

// Columns a string takes (one a code point).
int columns(const std::string& s) {
    int n = 0;
    for (unsigned char ch : s) n += (ch & 0xc0) != 0x80;
    return n;
}

// A probe character the corpus lacks, as the tables show it: in angle brackets (fed as a stand-in, no loss).
std::string marked(const std::string& c) { return "\u27e8" + c + "\u27e9"; }

void print_list(const std::string& file, const Checkpoint& ck) {
    const TimeLapse& tl = ck.timelapse;
    if (tl.empty()) {
        std::printf("%s holds no attention time-lapse (saved before they were recorded)\n", file.c_str());
        return;
    }
    int P = tl.length();
    std::printf("%s: a time-lapse of the probe \"%s\" (%d characters): %zu snapshots, steps %d to %d, %.2f MiB "
                "(weights %.2f MiB)\n",
                file.c_str(), one_line(tl.text()).c_str(), P, tl.snapshots().size(), tl.snapshots().front().step,
                tl.snapshots().back().step, tl.bytes() / 1048576.0, tl.weights_bytes() / 1048576.0);
    if (!tl.has_weights())
        std::printf("(saved before weights were kept: only this probe's views are there, no other text can be replayed)\n");
    std::printf("%8s  %10s  %12s  %8s  %s\n", "step", "probe loss", "mean entropy", "val loss", "storage");
    for (size_t i = 0; i < tl.snapshots().size(); i++) {
        const ProbeSnapshot& s = tl.snapshots()[i];
        char entropy[32] = "-", val[32] = "-";
        if (tl.n_layer() > 0) std::snprintf(entropy, sizeof entropy, "%.4f", mean_attention_entropy(s, P, tl.n_layer(), tl.n_head()));
        for (const auto& e : ck.history.evals)
            if (e.step == s.step) std::snprintf(val, sizeof val, "%.4f", e.val);
        const RecordedWeights& w = tl.weights(i);
        std::printf("%8d  %10.4f  %12s  %8s  %s\n", s.step, s.mean_loss(), entropy, val,
                    w.empty() ? "views" : w.is_bf16() ? "bf16" : "fp32");
    }
}

// The probe's characters, the loss on each (from the second on) and the top-5 predictions after each.
void print_positions(const TokenNames& names, const std::vector<uint32_t>& tokens, const std::string& text,
                     const ProbeSnapshot& s) {
    std::vector<std::string> chars = probe_chars(tokens, text, names.vocab);
    std::vector<uint8_t> unknown = probe_unknown(tokens, text, names.vocab);
    int width = 4;  // the widest token's glyph, within reason
    for (uint32_t t : tokens) width = std::clamp(columns(names.glyph(int32_t(t))), width, 16);
    std::printf("%4s %s %8s   the likeliest next %s\n", "pos", pad(names.unit(), width, false).c_str(), "loss",
                names.units());
    for (size_t t = 0; t < tokens.size(); t++) {
        std::string c = unknown[t] ? marked(chars[t]) : names.glyph(int32_t(tokens[t]));
        std::printf("%4zu %s ", t, pad(c, width, false).c_str());
        if (t == 0) std::printf("%8s   ", "-");
        else if (std::isnan(s.char_loss[t - 1])) std::printf("%8s   ", "no loss");
        else std::printf("%8.3f   ", s.char_loss[t - 1]);
        for (int k = 0; k < k_probe_top; k++) {
            int32_t id = s.top_ids[t * k_probe_top + k];
            if (id >= 0) std::printf("%s %.2f  ", names.glyph(id).c_str(), s.top_p[t * k_probe_top + k]);
        }
        std::printf("\n");
    }
}

// One head's (P, P) attention: a table of percentages for short probes, else each row's three strongest keys.
void print_head(const TokenNames& names, const std::vector<uint32_t>& tokens, const std::vector<float>& a,
                bool causal) {
    int P = int(tokens.size());
    auto glyph = [&](uint32_t id) { return names.glyph(int32_t(id)); };
    int width = 4;  // the widest token's glyph, within reason
    for (uint32_t t : tokens) width = std::clamp(columns(glyph(t)), width, 16);
    if (P <= 24 && !names.bpe) {  // (tokens are wider than a table's column: listed instead)
        std::printf("     ");
        for (int j = 0; j < P; j++) std::printf("%s", pad(glyph(tokens[j]), 4).c_str());
        std::printf("   (%% of each row)\n");
        for (int i = 0; i < P; i++) {
            std::printf("%s ", pad(glyph(tokens[i]), 4).c_str());
            for (int j = 0; j < P; j++) {
                if (causal && j > i) std::printf("%4s", "");
                else std::printf("%4.0f", 100.0 * a[size_t(i) * P + j]);
            }
            std::printf("\n");
        }
        return;
    }
    for (int i = 0; i < P; i++) {
        std::vector<int> order(causal ? i + 1 : P);
        for (size_t j = 0; j < order.size(); j++) order[j] = int(j);
        size_t k = std::min<size_t>(3, order.size());
        std::partial_sort(order.begin(), order.begin() + long(k), order.end(),
                          [&](int x, int y) { return a[size_t(i) * P + x] > a[size_t(i) * P + y]; });
        std::printf("%4d %s ->", i, pad(glyph(tokens[i]), width, false).c_str());
        for (size_t n = 0; n < k; n++)
            std::printf("  %d %s %.2f", order[n], glyph(tokens[order[n]]).c_str(), a[size_t(i) * P + order[n]]);
        std::printf("\n");
    }
}

int inspect(const InspectOptions& o) {
    OpenRun run(load_checkpoint(o.file));
    const Checkpoint& ck = run.ck;
    const Config& c = ck.config;
    const TimeLapse& tl = ck.timelapse;
    int L = c.kind == ModelKind::Bigram ? 0 : c.n_layer, NH = c.kind == ModelKind::Bigram ? 0 : c.n_head;
    if ((o.has_layer || o.has_head) && L == 0)
        throw Error("the bigram model has no attention: leave out --layer and --head");
    // numbered from 1, as the tables print them: --layer 0 is out of range, not "every layer"
    if (o.has_layer && (o.layer < 1 || o.layer > L))
        throw Error("--layer " + std::to_string(o.layer) + " is out of range: the model has layers 1 to " + std::to_string(L));
    if (o.has_head && (o.head < 1 || o.head > NH))
        throw Error("--head " + std::to_string(o.head) + " is out of range: the model has heads 1 to " + std::to_string(NH));
    if (o.list) {
        print_list(o.file, ck);
        return 0;
    }

    ProbeSnapshot snap;
    std::vector<uint32_t> tokens;
    std::string how, text;  // text: the probe's characters as typed (probe_chars)
    const ProbeSnapshot* recorded = nullptr;
    if (o.has_step) {
        recorded = checked_step(o.file, tl, true, o.step, "compute the probe at its weights");
        bool other_text = o.has_probe && o.probe != tl.text();
        if ((other_text || o.sample > 0) && !tl.has_weights())  // (a probe's newline is said as \n: one line)
            throw Error(o.file + " was saved before the time-lapse kept its weights: only its probe \"" +
                        one_line(tl.text()) + "\" can be shown at a step (leave out --probe and --sample), or any text "
                        "at the checkpoint's weights (leave out --step)");
        if (!other_text && o.sample == 0) {  // the recorded views of the recorded probe: no GPU needed
            snap = *recorded;
            tokens = tl.tokens();
            text = tl.text();
            how = "recorded at step " + std::to_string(snap.step);
        }
    }
    if (tokens.empty()) {  // computed on the training kernels: at a recorded step's weights, or at the checkpoint's
        const Dataset& data = run.open_corpus(o.data);
        std::string note;
        if (o.has_probe) {
            tokens = Session::probe_tokens(data, o.probe, c.block_size, &note, &text);
        } else if (!tl.empty()) {
            tokens = tl.tokens();
            text = tl.text();
        } else {
            tokens = Session::probe_tokens(data, Session::default_probe(data, c.block_size), c.block_size, nullptr, &text);
        }
        if (!note.empty()) std::fprintf(stderr, "attnlab: %s\n", note.c_str());
        Session& session = run.start(o.device, 1);  // one sequence: the training batch's buffers need not be made
        std::string sample;
        if (recorded) {
            snap = session.view_at(recorded->step, tokens, text);
            how = "computed from the weights recorded at step " + std::to_string(snap.step) + " (" +
                  (tl.weights_bf16() ? "bf16" : "fp32") + ")";
            if (o.sample > 0) sample = session.sample_at(recorded->step, o.prompt, o.sample, o.seed).text;
        } else {
            snap = session.trainer().probe(tokens);
            mask_unknown(snap, probe_unknown(tokens, text, ck.vocab));
            how = "at the checkpoint's weights (step " + std::to_string(ck.state.step) + ")";
            if (o.sample > 0) sample = session.trainer().generate(o.prompt, o.sample, c.temperature, c.top_k, o.seed);
        }
        if (o.sample > 0) {
            std::printf("%s: %s, sampled with seed %llu after \"%s\":\n%s\n\n", o.file.c_str(), how.c_str(),
                        static_cast<unsigned long long>(o.seed), one_line(o.prompt).c_str(), sample.c_str());
        }
    }

    int P = int(tokens.size());
    std::printf("%s: preset %s (%s), %s\n", o.file.c_str(), c.preset.c_str(), c.describe().c_str(), how.c_str());
    const TokenNames names(ck);
    std::string shown = names.shown(tokens, probe_chars(tokens, text, ck.vocab), probe_unknown(tokens, text, ck.vocab));
    std::printf("probe (%d %s): \"%s\"\n", P, names.units(), one_line(shown).c_str());
    if (names.bpe)
        std::printf("probe loss %.4f (the mean of each token's -log p given the tokens before it)\n", snap.mean_loss());
    else
        std::printf("probe loss %.4f (the mean of each character's -log p given the characters before it)\n",
                    snap.mean_loss());
    std::printf("(\u2423 is a space, \u23ce a newline%s)\n\n",
                names.bpe ? "; | separates tokens, \\xNN is a byte of a character cut between tokens"
                : shown.find("\u27e8") != std::string::npos
                    ? "; \u27e8x\u27e9 a character the corpus lacks: fed as a stand-in, given no loss" : "");
    print_positions(names, tokens, text, snap);
    if (L == 0) {
        std::printf("\nthe bigram model has no attention\nmean attention entropy: n/a\n");
        return 0;
    }
    // the heads shown in full: those --layer/--head pick; without them every head of a small model, else the first
    bool picked = o.has_layer || o.has_head, all = !picked && L * NH <= 4;
    std::printf("\n");
    for (int l = 0; l < L; l++)
        for (int h = 0; h < NH; h++) {
            bool chosen = picked ? (!o.has_layer || o.layer == l + 1) && (!o.has_head || o.head == h + 1)
                                 : all || (l == 0 && h == 0);
            if (!chosen) continue;
            std::printf("attention, layer %d head %d (rows: each position; columns: what it attends to):\n", l + 1, h + 1);
            print_head(names, tokens, snapshot_head(snap, P, NH, l, h), c.causal);
            std::printf("\n");
        }
    if (!picked && !all) std::printf("(--layer L --head H shows another head)\n\n");
    std::printf("%-12s %9s %11s %9s  %s\n", "head", "entropy", "uniformity", "distance", "reads as");
    for (int l = 0; l < L; l++)
        for (int h = 0; h < NH; h++) {
            HeadSummary s = summarize_head(snapshot_head(snap, P, NH, l, h), P, c.causal);
            char name[32];
            std::snprintf(name, sizeof name, "L%d H%d", l + 1, h + 1);
            std::printf("%-12s %9.4f %11.3f %9.2f  %s\n", name, s.entropy, s.uniformity, s.mean_distance,
                        s.label.empty() ? "-" : s.label.c_str());
        }
    std::printf("mean attention entropy: %.4f\n", mean_attention_entropy(snap, P, L, NH));
    return 0;
}

}  // namespace

int run_inspect_command(int argc, char** argv) {
    InspectOptions o;
    CLI::App app{"What a checkpoint's model makes of a probe text: attention, losses, predictions", "attnlab inspect"};
    app.add_option("file", o.file, "a checkpoint (safetensors) saved by attnlab")->required();
    app.add_option("--probe", o.probe, "the text to look at (default: the time-lapse's probe, else the first block "
                                       "size characters of the validation split)");
    // a number each: CLI11 would read an empty value ('') as 0
    CLI::Validator number([](std::string& v) { return v.empty() ? std::string("needs a number (got '')") : std::string(); },
                          "", "N");
    app.add_option("--step", o.step, "the recorded snapshot nearest this step (default: compute at the checkpoint's weights)")
        ->check(number);
    app.add_option("--layer", o.layer, "show this layer's heads (from 1)")->check(number);
    app.add_option("--head", o.head, "show this head (from 1)")->check(number);
    app.add_flag("--list", o.list, "list the recorded steps, their storage and the time-lapse's size");
    CircuitsRequest circuits;
    app.add_option("--ablate", circuits.ablate, "knock these heads out, LAYER:HEAD from 1 (1:2,2:1): the probe's and "
                                                "the validation loss, intact and ablated");
    app.add_option("--ablation", circuits.mode, "how --ablate knocks a head out: zero (its output replaced by 0, the "
                                                "default) or mean (by its mean over validation batches)");
    app.add_flag("--icl", circuits.icl, "the loss at each position and the in-context learning score at every "
                                        "recorded step");
    bool heads = false;
    app.add_flag("--heads", heads, "every head's scores (previous, duplicate, induction, first, current character) at "
                                   "the step or the checkpoint's weights");
    app.add_option("--sample", o.sample, "also print N characters sampled at the step (or the checkpoint's weights)")
        ->check(number)
        ->check(CLI::Range(0, 100000));
    app.add_option("--prompt", o.prompt, "the text the sample continues (default: a newline)");
    app.add_option("--seed", o.seed, "the sample's seed: the same at every step shows what changed in the model (default 1337)")
        ->check(number);
    app.add_option("--data", o.data, "the corpus (default: the one the checkpoint names, else tiny Shakespeare)");
    app.add_option("--device", o.device, "Vulkan device index (see attnlab --list-devices)")->check(number);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);
        std::fprintf(stderr, "error: %s (attnlab inspect --help lists the options)\n", one_line(e.what()).c_str());
        return 2;
    }
    o.has_step = app.count("--step") > 0;
    o.has_probe = app.count("--probe") > 0;
    o.has_layer = app.count("--layer") > 0;
    o.has_head = app.count("--head") > 0;
    if (heads)
        return run_command("'" + o.file + "'", [&] {
            return inspect_heads({o.file, o.data, o.probe, o.step, o.device, o.has_step, o.has_probe,
                                  o.list || o.sample > 0 || o.has_layer || o.has_head ||
                                      app.count("--ablate") > 0 || circuits.icl});
        });
    if (app.count("--ablate") > 0 || circuits.icl) {
        circuits.file = o.file;
        circuits.data = o.data;
        circuits.probe = o.probe;
        circuits.step = o.step;
        circuits.device = o.device;
        circuits.has_step = o.has_step;
        circuits.has_probe = o.has_probe;
        if (app.count("--ablate") > 0 && circuits.icl) {
            std::fprintf(stderr, "error: --ablate and --icl are two reports: ask for one at a time\n");
            return 2;
        }
        return run_command("'" + o.file + "'", [&] { return circuits.icl ? inspect_icl(circuits) : inspect_ablate(circuits); });
    }
    return run_command("'" + o.file + "'", [&] { return inspect(o); });
}

}  // namespace attn
