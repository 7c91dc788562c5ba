// `attnlab lab`: prints the self-attention lab's demos as plain text (for terminals, learners without a display, tests).
#include "lab_cli.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "lab/lab_model.h"
#include "lab/lab_registry.h"
#include "lab/lab_trick.h"
#include "train/dataset.h"

namespace attn {

namespace {

using lab::Matrix;

// The demo's text, printed only once the whole demo has run: an error then prints one line and nothing else.
class Text {
public:
    __attribute__((format(printf, 2, 3))) void operator()(const char* fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char small[512];
        int n = std::vsnprintf(small, sizeof small, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (size_t(n) < sizeof small) {
            m_s.append(small, size_t(n));
            return;
        }
        std::string big(size_t(n) + 1, '\0');
        va_start(ap, fmt);
        std::vsnprintf(big.data(), big.size(), fmt, ap);
        va_end(ap);
        m_s.append(big.data(), size_t(n));
    }
    const std::string& str() const { return m_s; }

private:
    std::string m_s;
};

// Options each demo accepts (besides --device); a value follows every one of them.
const std::map<std::string, std::set<std::string>> k_options = {
    {"matmul", {"--a", "--b"}},
    {"average", {"--shape", "--show", "--seed"}},
    {"softmax", {"--scores", "--mult"}},
    {"scaling", {"--head-size", "--bins", "--seed"}},
    {"encoder", {"--data", "--steps", "--tail", "--chars", "--seed"}},
    {"position", {"--text", "--pos", "--seed"}},
    {"batches", {"--change", "--replacement", "--seed"}},
    {"graph", {"--text", "--mask", "--seed"}},
};

const char* k_usage =
    "usage: attnlab lab --list\n"
    "       attnlab lab NAME [--device N] [options]\n"
    "  matmul   [--a ones|tril|average] [--b \"2,7;6,4;6,5\"]\n"
    "  average  [--shape 4,8,2] [--show 0] [--seed 1337 (PyTorch's randn when B*T*C >= 16)]\n"
    "  softmax  [--scores 0.1,-0.2,0.3,-0.2,0.5] [--mult 1,8 (the default; each in (0, 1024])]\n"
    "  scaling  [--head-size 16 (1..256)] [--bins 21 (1..1000)] [--seed 1337]\n"
    "  encoder  [--data FILE] [--steps 500] [--tail 50] [--chars 200] [--seed N]\n"
    "  position [--text \"to be or\"] [--pos on|off (default: off, then on)] [--seed N]\n"
    "  batches  [--change 2] [--replacement \"uestion.\"] [--seed N]\n"
    "  graph    [--text \"to be or\"] [--mask on|off (default: on, a decoder)] [--seed N]\n";

std::vector<float> parse_floats(const std::string& s, char sep, const std::string& flag) {
    std::vector<float> v;
    std::stringstream ss(s);
    std::string item;
    if (!s.empty() && (s.back() == sep || s.front() == sep))
        throw Error(flag + ": '" + s + "' has a '" + sep + "' with no number beside it; give numbers separated by '" + sep + "'");
    while (std::getline(ss, item, sep)) {
        char* end = nullptr;
        float x = std::strtof(item.c_str(), &end);
        if (item.empty() || *end != '\0' || std::isnan(x))
            throw Error(flag + ": '" + item + "' is not a number; give numbers separated by '" + sep + "'");
        if (!std::isfinite(x)) throw Error(flag + ": " + item + " is out of range (a float holds up to about 3.4e38)");
        v.push_back(x);
    }
    if (v.empty()) throw Error(flag + ": give at least one number");
    return v;
}

int parse_int(const std::string& s, const std::string& flag) {
    char* end = nullptr;
    errno = 0;
    long x = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0') throw Error(flag + ": '" + s + "' is not a whole number");
    if (errno == ERANGE || x < -1000000000L || x > 1000000000L) throw Error(flag + ": " + s + " is out of range");
    return int(x);
}

// 0 to 2^53, as the main command's --seed
uint64_t parse_seed(const std::string& s) {
    uint64_t x = 0;
    if (std::string why = seed_problem(s, &x); !why.empty()) throw Error("--seed: " + why);
    return x;
}

// "2,7;6,4;6,5" -> (3, 2)
Matrix parse_matrix(const std::string& s, const std::string& flag) {
    Matrix m;
    if (!s.empty() && (s.back() == ';' || s.front() == ';'))
        throw Error(flag + ": '" + s + "' has a ';' with no row beside it; rows are separated by ';', e.g. \"2,7;6,4;6,5\"");
    std::stringstream ss(s);
    std::string row;
    while (std::getline(ss, row, ';')) {
        std::vector<float> r = parse_floats(row, ',', flag);
        if (m.rows > 0 && int(r.size()) != m.cols)
            throw Error(flag + ": every row needs the same number of values, e.g. \"2,7;6,4;6,5\"");
        m.cols = int(r.size());
        m.rows++;
        m.v.insert(m.v.end(), r.begin(), r.end());
    }
    if (m.rows == 0) throw Error(flag + ": give a matrix, rows separated by ';', e.g. \"2,7;6,4;6,5\"");
    return m;
}

void print_wrapped(Text& out, const std::string& text, size_t width = 78) {
    std::stringstream ss(text);
    std::string word, line;
    while (ss >> word) {
        if (!line.empty() && line.size() + 1 + word.size() > width) {
            out("%s\n", line.c_str());
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty()) out("%s\n", line.c_str());
}

void print_matrix(Text& out, const char* name, const Matrix& m) {
    out("%s (%d x %d)\n", name, m.rows, m.cols);
    for (int r = 0; r < m.rows; r++) {
        out("  ");
        for (int c = 0; c < m.cols; c++) out(" %9.4f", m.at(r, c));
        out("\n");
    }
}

void print_vector(Text& out, const char* name, const std::vector<float>& v) {
    out("%s", name);
    for (float x : v) out(" %9.4f", x);
    out("\n");
}

void print_bars(Text& out, const char* head, const std::vector<float>& probs, const std::vector<float>& scores) {
    // scores to 4 decimals in one column as wide as the widest (1e30 prints 31 digits before the point), %g past 1e6
    bool big = false;
    for (float s : scores) big |= std::abs(s) >= 1e6f;
    int w = 8;
    for (float s : scores) w = std::max(w, std::snprintf(nullptr, 0, big ? "%.4g" : "%.4f", double(s)));
    w = std::max(w, int(std::strlen(head)));
    out("  %*s  %7s\n", w, head, "prob");
    for (size_t i = 0; i < probs.size(); i++) {
        int n = int(std::lround(probs[i] * 50));
        out(big ? "  %*.4g  %7.4f |%s\n" : "  %*.4f  %7.4f |%s\n", w, scores[i], probs[i], std::string(n, '#').c_str());
    }
}

void print_histogram(Text& out, const char* name, const std::vector<int>& h, float lo, float hi) {
    int mx = 1;
    for (int c : h) mx = std::max(mx, c);
    out("%s (counts per bin)\n", name);
    float w = (hi - lo) / float(h.size());
    // values below lo and from hi on are counted in the end bins: their labels are open-ended
    for (size_t i = 0; i < h.size(); i++) {
        int n = int(std::lround(double(h[i]) / mx * 40));
        char a[16], b[16];
        if (i == 0) std::snprintf(a, sizeof a, "%8s", "-inf");
        else std::snprintf(a, sizeof a, "%8.2f", lo + w * i);
        if (i + 1 == h.size()) std::snprintf(b, sizeof b, "%8s", "+inf");
        else std::snprintf(b, sizeof b, "%8.2f", lo + w * (i + 1));
        out("  %c%s, %s) %6d |%s\n", i == 0 ? '(' : '[', a, b, h[i], std::string(n, '#').c_str());
    }
}

std::string visible(const std::string& s) {  // newlines shown as the lecture's \n, other control characters escaped
    std::string o;
    for (unsigned char c : s) {
        if (c == '\\') o += "\\\\";  // a typed backslash doubled, so that "a\\nb" and a newline read apart
        else if (c == '\n') o += "\\n";
        else if (c == '\t') o += "\\t";
        else if (c == '\r') o += "\\r";
        else if (c < 0x20 || c == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            o += buf;
        } else o += char(c);
    }
    return o;
}

void show_matmul(Text& out, Context& ctx, KernelCache& kc, const std::map<std::string, std::string>& opt) {
    lab::MatmulDemoInput in;
    if (opt.count("--b")) in.b = parse_matrix(opt.at("--b"), "--b");
    std::vector<std::pair<std::string, lab::TrilMode>> modes = {
        {"ones", lab::TrilMode::Ones}, {"tril", lab::TrilMode::Tril}, {"average", lab::TrilMode::TrilAverage}};
    if (opt.count("--a")) {
        std::string a = opt.at("--a");
        std::erase_if(modes, [&](const auto& m) { return m.first != a; });
        if (modes.empty()) throw Error("--a: use ones, tril or average (the row-normalised tril)");
    }
    for (const auto& [label, mode] : modes) {
        in.a_mode = mode;
        lab::MatmulDemo d = lab::run_matmul_demo(ctx, kc, in);
        out("\n--- a = %s ---\n", label.c_str());
        print_matrix(out, "a", d.a);
        print_matrix(out, "b", d.b);
        print_matrix(out, "c = a @ b", d.c);
    }
}

void show_average(Text& out, Context& ctx, KernelCache& kc, const std::map<std::string, std::string>& opt) {
    lab::AverageDemoInput in;
    if (opt.count("--shape")) {
        std::vector<int> s;
        std::stringstream ss(opt.at("--shape"));
        for (std::string item; std::getline(ss, item, ',');) s.push_back(parse_int(item, "--shape"));
        if (s.size() != 3) throw Error("--shape: give B,T,C, e.g. --shape 4,8,2");
        in.B = s[0]; in.T = s[1]; in.C = s[2];
    }
    if (opt.count("--show")) in.show_b = parse_int(opt.at("--show"), "--show");
    if (opt.count("--seed")) in.seed = parse_seed(opt.at("--seed"));
    lab::AverageDemo d = lab::run_average_demo(ctx, kc, in);
    out("\n%s; showing batch element %d\n\n", d.x_origin.c_str(), in.show_b);
    print_matrix(out, "x[b]", d.x);
    print_matrix(out, "wei = softmax(masked_fill(zeros, tril == 0, -inf))", d.wei);
    print_matrix(out, "xbow  (1: loops over the past)", d.xbow_loop);
    print_matrix(out, "xbow2 (2: wei @ x, wei = tril / rowsum)", d.xbow_matmul);
    print_matrix(out, "xbow3 (3: masked_fill + softmax, then @ x)", d.xbow_softmax);
    out("largest difference between the three, over all (B, T, C): %.3g\n", d.max_diff);
    out("\nversion 4: self-attention, the lecture's next cell and its numbers: torch.manual_seed(1337);\n"
        "x = torch.randn(%d, %d, %d); key, query, value = nn.Linear(%d, %d, bias=False);\n"
        "wei = softmax(masked_fill(query(x) @ key(x)^T, tril == 0, -inf)); out = wei @ value(x)\n"
        "The weights are no longer uniform: each token computes its own, from the data. (Not yet scaled: the\n"
        "lecture multiplies by head_size**-0.5 next; see lab scaling.)\n\n", lab::k_head_B, lab::k_head_T, lab::k_head_C,
        lab::k_head_C, lab::k_head_HS);
    print_matrix(out, "wei[0]", d.head_wei);
    out("out = wei @ v: (%d, %d, %d); out[0] is (%d x %d)\n", lab::k_head_B, lab::k_head_T, lab::k_head_HS, d.head_out.rows,
        d.head_out.cols);
}

void show_softmax(Text& out, Context& ctx, KernelCache& kc, const std::map<std::string, std::string>& opt) {
    lab::SoftmaxDemoInput in;
    if (opt.count("--scores")) in.scores = parse_floats(opt.at("--scores"), ',', "--scores");
    if (opt.count("--mult")) in.multipliers = parse_floats(opt.at("--mult"), ',', "--mult");
    lab::SoftmaxDemo d = lab::run_softmax_demo(ctx, kc, in);
    for (size_t i = 0; i < d.multipliers.size(); i++) {
        out("\nsoftmax(scores * %g)\n", d.multipliers[i]);
        print_vector(out, "  probs", d.probs[i]);
        std::vector<float> scaled = d.scores;  // what the softmax saw
        for (float& s : scaled) s *= d.multipliers[i];
        char head[32];
        std::snprintf(head, sizeof head, "score*%g", d.multipliers[i]);
        print_bars(out, head, d.probs[i], scaled);
    }
}

void show_scaling(Text& out, Context& ctx, KernelCache& kc, const std::map<std::string, std::string>& opt) {
    lab::ScalingDemoInput in;
    if (opt.count("--head-size")) in.head_size = parse_int(opt.at("--head-size"), "--head-size");
    if (opt.count("--bins")) in.bins = parse_int(opt.at("--bins"), "--bins");
    if (opt.count("--seed")) in.seed = parse_seed(opt.at("--seed"));
    lab::ScalingDemo d = lab::run_scaling_demo(ctx, kc, in);
    out("\ntorch.manual_seed(%llu); q = torch.randn(%d, %d, %d); k = torch.randn(%d, %d, %d); wei = q @ k^T: %zu scores\n",
        (unsigned long long)in.seed, in.B, in.T, d.head_size, in.B, in.T, d.head_size, d.samples);
    out("var(q)                        %9.4f\n", d.var_q);
    out("var(k)                        %9.4f\n", d.var_k);
    out("var(q @ k^T)          unscaled %9.4f   (about head_size = %d)\n", d.var_unscaled, d.head_size);
    out("var(q @ k^T * hs^-0.5)  scaled %9.4f   (about 1)\n\n", d.var_scaled);
    print_histogram(out, "unscaled scores", d.hist_unscaled, d.hist_lo, d.hist_hi);
    print_histogram(out, "scaled scores", d.hist_scaled, d.hist_lo, d.hist_hi);
    out("\nsoftmax of one row (batch 0, row 0)\n");
    print_vector(out, "  unscaled", d.row_unscaled);
    print_vector(out, "  scaled  ", d.row_scaled);
    out("\nthe lecture's own cell (its generator going on from the head in lab average's version 4):\n"
        "k = torch.randn(%d, %d, %d); q = torch.randn(%d, %d, %d); wei = q @ k^T * head_size**-0.5\n"
        "k.var() %.4f   q.var() %.4f   wei.var() %.4f   (unscaled: %.4f)\n", lab::k_head_B, lab::k_head_T, lab::k_head_HS,
        lab::k_head_B, lab::k_head_T, lab::k_head_HS, d.lecture.var_k, d.lecture.var_q, d.lecture.var_scaled,
        d.lecture.var_unscaled);
}

void show_encoder(Text& out, Context& ctx, const std::map<std::string, std::string>& opt) {
    lab::EncoderDemoInput in;
    std::string path = opt.count("--data") ? opt.at("--data") : default_corpus_path();
    if (opt.count("--steps")) in.steps = parse_int(opt.at("--steps"), "--steps");
    if (opt.count("--tail")) in.tail = parse_int(opt.at("--tail"), "--tail");
    else in.tail = std::max(1, std::min(in.tail, in.steps));  // the default tail, for fewer steps: all of them
    if (opt.count("--chars")) in.sample_chars = parse_int(opt.at("--chars"), "--chars");
    if (opt.count("--seed")) in.seed = parse_seed(opt.at("--seed"));
    lab::check_encoder_input(in);  // before the corpus is read and the line below claims a run
    Dataset data = Dataset::from_file(path);
    lab::check_encoder_corpus(data);
    std::fprintf(stderr, "training the single-head model twice, %d steps each, on %s...\n", in.steps, path.c_str());
    lab::EncoderDemo d = lab::run_encoder_demo(ctx, data, in);
    for (const lab::EncoderRun* r : {&d.decoder, &d.encoder}) {
        out("\n--- %s (causal mask %s) ---\n", r->causal ? "decoder" : "encoder", r->causal ? "on" : "off");
        out("train loss, mean of the last %d of %d steps: %.4f\n", d.tail, d.steps, r->train_loss);
        print_matrix(out, "attention weights of one sequence (T x T)", r->att);
        out("sample: %s\n", visible(r->sample).c_str());
    }
    std::string verdict = lab::encoder_verdict(d);
    if (d.encoder.train_loss >= d.decoder.train_loss && d.steps < lab::k_encoder_max_steps)
        verdict += ", e.g. --steps " + std::to_string(std::min(lab::k_encoder_max_steps, std::max(500, 2 * d.steps)));
    out("\n%s\n", verdict.c_str());
}

void show_position(Text& out, Context& ctx, KernelCache& kc, const std::map<std::string, std::string>& opt) {
    lab::PositionDemoInput in;
    if (opt.count("--text")) in.text = opt.at("--text");
    if (opt.count("--seed")) in.seed = parse_seed(opt.at("--seed"));
    std::vector<bool> pos = {false, true};
    if (opt.count("--pos")) {
        const std::string& p = opt.at("--pos");
        if (p != "on" && p != "off") throw Error("--pos: use on or off");
        pos = {p == "on"};
    }
    for (bool use_pos : pos) {
        in.use_pos = use_pos;
        lab::PositionDemo d = lab::run_position_demo(ctx, kc, in);
        out("\n--- position embeddings %s, no mask ---\n", use_pos ? "on" : "off");
        out("input    \"%s\"\npermuted \"%s\"   perm =", d.text.c_str(), d.permuted.c_str());
        for (int p : d.perm) out(" %d", p);
        out("\n");
        print_matrix(out, "attention weights, input", d.att);
        print_matrix(out, "attention weights, permuted input", d.att_perm);
        out("largest difference after undoing the permutation: %.3g\n", d.max_diff);
    }
}

void show_batches(Text& out, Context& ctx, KernelCache& kc, const std::map<std::string, std::string>& opt) {
    lab::BatchesDemoInput in;
    if (opt.count("--change")) in.changed = parse_int(opt.at("--change"), "--change");
    if (opt.count("--replacement")) in.replacement = opt.at("--replacement");
    if (opt.count("--seed")) in.seed = parse_seed(opt.at("--seed"));
    lab::BatchesDemo d = lab::run_batches_demo(ctx, kc, in);
    out("\nbatch of %zu sequences through one attention head (causal, position embeddings on)\n\n",
                d.before.size());
    out("   b  before      after       weights     outputs\n");
    for (size_t b = 0; b < d.before.size(); b++)
        out("  %2zu  \"%s\"  \"%s\"  %-10s  %s\n", b, d.before[b].c_str(), d.after[b].c_str(),
                    d.att_changed[b] ? "changed" : "identical", d.out_changed[b] ? "changed" : "identical");
    out("\n");
    if (d.unchanged())
        out("(the replacement is the same text as the original: nothing changed; try --replacement with other characters)\n\n");
    print_matrix(out, "attention weights of the changed element, before", d.att_before);
    print_matrix(out, "attention weights of the changed element, after", d.att_after);
    out("\"identical\" means bit-identical: every float compared with memcmp\n");
}

void show_graph(Text& out, Context& ctx, KernelCache& kc, const std::map<std::string, std::string>& opt) {
    lab::GraphDemoInput in;
    if (opt.count("--text")) in.text = opt.at("--text");
    if (opt.count("--seed")) in.seed = parse_seed(opt.at("--seed"));
    if (opt.count("--mask")) {
        const std::string& m = opt.at("--mask");
        if (m != "on" && m != "off") throw Error("--mask: use on (a decoder) or off (an encoder)");
        in.causal = m == "on";
    }
    lab::GraphDemo d = lab::run_graph_demo(ctx, kc, in);
    const int T = int(d.text.size());
    auto node = [&](int t) {
        char s[24];
        std::snprintf(s, sizeof s, "%d '%s'", t, visible(std::string(1, d.text[size_t(t)])).c_str());
        return std::string(s);
    };
    out("\nnodes: the %d characters of \"%s\", one vector each (a random single head, head_size %d)\n", T,
        visible(d.text).c_str(), d.head_size);
    out("edges: %d of the %d possible; %s\n\n", d.edges, T * T,
        d.causal ? "the mask (a decoder) gives node t an edge from itself and from every node before it"
                 : "no mask (an encoder): every node has an edge from every node");
    out("what each node receives, weight = softmax over its incoming edges of q_t . k_j / sqrt(%d):\n", d.head_size);
    for (int t = 0; t < T; t++) {
        out("  node %-6s <-", node(t).c_str());
        for (int j = 0; j < T; j++)
            if (!d.causal || j <= t) out("  %s %.2f", node(j).c_str(), d.att.at(t, j));
        out("\n");
    }
    out("\nnode t's output is the sum of the values v_j arriving on its edges, weighted as above:\n");
    out("  largest |out_t - sum_j w(j -> t) v_j| (the GPU's output against that sum on the CPU): %.3g\n",
        d.max_message_error);
    out("  largest |sum of a node's incoming weights - 1|: %.3g\n", d.max_sum_error);
    if (d.causal) out("  largest weight where the mask has no edge (from the future): %.3g\n", d.max_no_edge);
}

}  // namespace

int run_lab_command(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        std::fputs(k_usage, args.empty() ? stderr : stdout);
        return args.empty() ? 2 : 0;
    }
    if (args[0] == "--list") {
        if (args.size() > 1) {
            std::fprintf(stderr, "error: lab --list takes nothing after it (got '%s')\n", args[1].c_str());
            return 2;
        }
        for (const auto& d : lab::demos()) std::printf("%-9s %s\n", d.name.c_str(), d.title.c_str());
        return 0;
    }
    const lab::DemoInfo* demo = lab::find_demo(args[0]);
    if (!demo) {
        if (args[0].rfind("--", 0) == 0) {  // lab --device 0 softmax: the name comes first
            std::fprintf(stderr, "error: name the demo first: attnlab lab NAME %s ...; the demos are: %s\n", args[0].c_str(),
                         lab::demo_names().c_str());
            return 2;
        }
        std::fprintf(stderr, "error: no lab demo '%s'; the demos are: %s\n", args[0].c_str(), lab::demo_names().c_str());
        return 2;
    }
    // --flag=value, as the main command line takes it (only at a flag's place: a value may hold '=')
    for (size_t i = 1; i < args.size(); i += 2)
        if (size_t eq = args[i].find('='); args[i].rfind("--", 0) == 0 && eq != std::string::npos) {
            args.insert(args.begin() + long(i) + 1, args[i].substr(eq + 1));
            args[i].resize(eq);
        }
    bool help = false;  // --help or -h where a flag stands (a value may be "-h": lab position --text -h)
    for (size_t i = 1; i < args.size(); i += 2) help |= args[i] == "--help" || args[i] == "-h";
    if (help) {  // lab NAME --help: the demo's title and its options (its line of k_usage)
        std::string usage = k_usage, key = "\n  " + demo->name + " ", opts;
        if (size_t at = usage.find(key); at != std::string::npos) {
            size_t from = at + key.size(), to = usage.find('\n', from);
            opts = usage.substr(from, to - from);  // "  [--a ...] ..." after the name's padding
            opts.erase(0, opts.find_first_not_of(' '));
        }
        std::printf("%s: %s\nusage: attnlab lab %s [--device N] %s\n", demo->name.c_str(), demo->title.c_str(),
                    demo->name.c_str(), opts.c_str());
        return 0;
    }
    std::map<std::string, std::string> opt;
    int device = -1;
    for (size_t i = 1; i < args.size(); i += 2) {
        const std::string& flag = args[i];
        bool known = flag == "--device" || k_options.at(demo->name).count(flag);
        if (!known) {
            std::fprintf(stderr, "error: lab %s does not take %s (see attnlab lab --help)\n", demo->name.c_str(),
                         flag.c_str());
            return 2;
        }
        if (i + 1 >= args.size()) {
            std::fprintf(stderr, "error: %s needs a value (see attnlab lab --help)\n", flag.c_str());
            return 2;
        }
        opt[flag] = args[i + 1];
    }
    return run_command("the lab demo " + demo->name, [&] {
        if (opt.count("--device")) {
            device = parse_int(opt.at("--device"), "--device");
            if (device < 0 || device > 64) throw Error("--device: " + opt.at("--device") + " is not in 0..64 (see attnlab --list-devices)");
        }
        ContextOptions co;
        co.device_index = device;
        co.quiet = true;  // stdout is the demo's text
        Context ctx(co);
        KernelCache kc(ctx);
        Text out;
        out("%s: %s\n\n", demo->name.c_str(), demo->title.c_str());
        print_wrapped(out, demo->explanation);
        if (demo->name == "matmul") show_matmul(out, ctx, kc, opt);
        else if (demo->name == "average") show_average(out, ctx, kc, opt);
        else if (demo->name == "softmax") show_softmax(out, ctx, kc, opt);
        else if (demo->name == "scaling") show_scaling(out, ctx, kc, opt);
        else if (demo->name == "encoder") show_encoder(out, ctx, opt);
        else if (demo->name == "position") show_position(out, ctx, kc, opt);
        else if (demo->name == "batches") show_batches(out, ctx, kc, opt);
        else if (demo->name == "graph") show_graph(out, ctx, kc, opt);
        std::fputs(out.str().c_str(), stdout);
        return 0;
    });
}

}  // namespace attn
