// Lab demos 5-8 on models: encoder versus decoder (training), position (permutation), batches (independence), graph.
#include "lab/lab_model.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "model/config.h"
#include "ops/attention.h"
#include "ops/embedding.h"
#include "ops/matmul.h"
#include "rng.h"
#include "train/trainer.h"
#include "vk/check.h"

namespace attn::lab {

namespace {

constexpr int BYTE_VOCAB = 128;  // the tiny model reads ASCII bytes

EncoderRun train_one(Context& ctx, const Dataset& data, const EncoderDemoInput& in, bool causal, int done_before,
                     const EncoderProgress& keep_going) {
    Config c;
    c.seed = in.seed;
    c.apply_preset("single-head");
    c.causal = causal;
    Trainer tr(ctx, data, c);
    EncoderRun r;
    r.causal = causal;
    double tail_sum = 0;
    int tail_n = 0;
    for (int i = 0; i < in.steps; i++) {
        StepResult s = tr.step();
        if (!s.finite) throw Error("lab encoder: the loss became NaN or Inf; try fewer steps or another seed");
        if (i >= in.steps - in.tail) { tail_sum += s.loss; tail_n++; }
        if (keep_going && !keep_going(done_before + i + 1, 2 * in.steps)) throw Stopped();
    }
    r.train_loss = tail_n ? tail_sum / tail_n : 0.0;
    const int T = c.block_size;
    std::vector<float> att = tr.read_attention();  // (n_layer, NH, T, T): layer 0, head 0 first
    att.resize(size_t(T) * T);
    r.att = Matrix(T, T, att);
    r.sample = tr.generate("", in.sample_chars, 1.0f, 0, in.seed);
    return r;
}

// what: how the error names the text, e.g. "lab position: the text"
std::vector<uint32_t> byte_tokens(const std::string& s, const std::string& what = "lab: the text") {
    std::vector<uint32_t> t;
    for (unsigned char ch : s) {
        if (ch >= BYTE_VOCAB)
            throw Error(what + " '" + s + "' has a character that is not ASCII: this demo takes ASCII only");
        t.push_back(ch);
    }
    return t;
}

bool bits_differ(const std::vector<float>& a, const std::vector<float>& b, size_t offset, size_t n) {
    return std::memcmp(a.data() + offset, b.data() + offset, n * sizeof(float)) != 0;
}

}  // namespace

std::string encoder_verdict(const EncoderDemo& d) {
    double below = d.decoder.train_loss - d.encoder.train_loss;
    char buf[160];
    if (below > 0)
        std::snprintf(buf, sizeof buf, "the encoder's train loss is %.4f below the decoder's", below);
    else  // too few steps for the encoder to learn to read the answer
        std::snprintf(buf, sizeof buf, "the encoder's train loss is not below the decoder's yet (%.4f above it): train longer",
                      -below);
    return buf;
}

void check_encoder_corpus(const Dataset& data) {
    Config c;
    c.apply_preset("single-head");
    data.check_block_size(c.block_size, false);  // the demo's block size is the preset's, not a flag
}

void check_encoder_input(const EncoderDemoInput& in) {
    if (in.steps < 1 || in.steps > k_encoder_max_steps)
        throw Error("lab encoder: steps must be 1.." + std::to_string(k_encoder_max_steps) + ", e.g. --steps 500");
    if (in.tail < 1 || in.tail > in.steps) throw Error("lab encoder: the loss tail must be 1..steps, e.g. --tail 50");
    if (in.sample_chars < 0 || in.sample_chars > 10000) throw Error("lab encoder: sample length must be 0..10000");
}

EncoderDemo run_encoder_demo(Context& ctx, const Dataset& data, const EncoderDemoInput& in,
                             const EncoderProgress& keep_going) {
    check_encoder_input(in);
    check_encoder_corpus(data);
    EncoderDemo d;
    d.steps = in.steps;
    d.tail = in.tail;
    d.decoder = train_one(ctx, data, in, true, 0, keep_going);
    d.encoder = train_one(ctx, data, in, false, in.steps, keep_going);
    return d;
}

TinyHeadOutput run_tiny_head(Context& ctx, KernelCache& kc, const TinyHeadInput& m, const std::vector<std::string>& seqs) {
    if (seqs.empty() || seqs[0].empty()) throw Error("lab: give at least one non-empty sequence");
    const uint32_t B = uint32_t(seqs.size()), T = uint32_t(seqs[0].size()), C = m.C, HS = m.HS;
    std::vector<uint32_t> tokens;  // (B*T,)
    for (const auto& s : seqs) {
        if (s.size() != T) throw Error("lab: every sequence in a batch must have the same length (T = " +
                                       std::to_string(T) + " characters)");
        auto t = byte_tokens(s);
        tokens.insert(tokens.end(), t.begin(), t.end());
    }
    std::vector<uint32_t> offsets(B);  // (B,)
    for (uint32_t b = 0; b < B; b++) offsets[b] = b * T;
    Rng rng(m.seed);
    std::vector<float> wte(size_t(BYTE_VOCAB) * C), wpe(size_t(T) * C), wqkv(size_t(3) * HS * C);
    for (auto& v : wte) v = float(rng.normal());  // (V, C)
    for (auto& v : wpe) v = float(rng.normal());  // (T, C)
    const double bound = 1.0 / std::sqrt(double(C));
    for (auto& v : wqkv) v = float(rng.uniform(-bound, bound));  // (3*HS, C): query | key | value, no bias
    Buffer gtok = to_gpu(ctx, tokens), goff = to_gpu(ctx, offsets), gwte = to_gpu(ctx, wte), gwpe = to_gpu(ctx, wpe),
           gw = to_gpu(ctx, wqkv);
    Buffer x = gpu_zeros(ctx, size_t(B) * T * C);         // (B, T, C)
    Buffer qkv = gpu_zeros(ctx, size_t(B) * T * 3 * HS);  // (B, T, 3*HS)
    Buffer att = gpu_zeros(ctx, size_t(B) * T * T);       // (B, 1, T, T)
    Buffer out = gpu_zeros(ctx, size_t(B) * T * HS);      // (B, T, HS)
    Buffer seed = gpu_zeros(ctx, 2);                      // (uvec2,) dropout key, unused at p = 0
    run_program(ctx, [&](Program& pr) {
        ops::embedding_forward(kc, pr, x, gtok, goff, gwte, gwpe, B, T, C, m.use_pos);
        pr.barrier("the qkv projection reads the embeddings");
        ops::matmul_forward(kc, pr, qkv, x, gw, gw, B * T, 3 * HS, C, false);
        pr.barrier("attention reads q, k and v");
        ops::attention_forward(kc, pr, out, att, qkv, B, T, 1, HS, m.causal, ops::AttnDropout{0.0f, 0, seed});
    });
    TinyHeadOutput o;
    o.att = att.read<float>(size_t(B) * T * T);
    o.out = out.read<float>(size_t(B) * T * HS);
    std::vector<float> q_k_v = qkv.read<float>(size_t(B) * T * 3 * HS);  // (B, T, 3*HS): q | k | v
    o.v.resize(size_t(B) * T * HS);
    for (size_t r = 0; r < size_t(B) * T; r++)
        std::copy_n(q_k_v.begin() + long(r * 3 * HS + 2 * HS), HS, o.v.begin() + long(r * HS));
    return o;
}

PositionDemo run_position_demo(Context& ctx, KernelCache& kc, const PositionDemoInput& in) {
    byte_tokens(in.text, "lab position: the text");  // ASCII, so that its length counts characters
    const int T = int(in.text.size());
    if (T < 2 || T > 64) throw Error("lab position: the text must have 2..64 characters, e.g. --text \"to be or\"");
    if (in.text.find_first_not_of(in.text[0]) == std::string::npos)
        throw Error("lab position: the text needs two different characters: a shuffle of '" + in.text +
                    "' reads the same, so it shows nothing, e.g. --text \"to be or\"");
    PositionDemo d;
    d.use_pos = in.use_pos;
    d.text = in.text;
    d.perm.resize(T);
    for (int t = 0; t < T; t++) d.perm[t] = t;
    Rng rng(in.perm_seed);
    d.permuted = in.text;
    // a shuffle whose text reads as the input's would prove nothing: shuffled again until it differs (the text has
    // two different characters, so some shuffle does; one that swaps them is the last resort)
    for (int tries = 0; tries < 100 && d.permuted == in.text; tries++) {
        for (int t = T - 1; t > 0; t--) std::swap(d.perm[t], d.perm[rng.below(t + 1)]);  // Fisher-Yates
        for (int t = 0; t < T; t++) d.permuted[t] = in.text[d.perm[t]];
    }
    if (d.permuted == in.text) {
        for (int t = 0; t < T; t++) d.perm[t] = t;
        int other = int(in.text.find_first_not_of(in.text[0]));
        std::swap(d.perm[0], d.perm[other]);
        for (int t = 0; t < T; t++) d.permuted[t] = in.text[d.perm[t]];
    }
    TinyHeadInput m;
    m.use_pos = in.use_pos;
    m.causal = false;  // an encoder: a mask would itself be a notion of order
    m.seed = in.seed;
    // both orders as two batch elements of one run: batch elements never talk (demo 7)
    TinyHeadOutput o = run_tiny_head(ctx, kc, m, {d.text, d.permuted});
    const size_t TT = size_t(T) * T, HS = m.HS;
    d.att = Matrix(T, T, std::vector<float>(o.att.begin(), o.att.begin() + TT));
    d.att_perm = Matrix(T, T, std::vector<float>(o.att.begin() + TT, o.att.begin() + 2 * TT));
    const float* out0 = o.out.data();
    const float* out1 = o.out.data() + size_t(T) * HS;
    for (int t = 0; t < T; t++) {
        for (size_t c = 0; c < HS; c++)  // permuted output row t is original row perm[t]
            d.max_diff = std::max(d.max_diff, std::abs(out1[t * HS + c] - out0[d.perm[t] * HS + c]));
        for (int s = 0; s < T; s++)
            d.max_diff = std::max(d.max_diff, std::abs(d.att_perm.at(t, s) - d.att.at(d.perm[t], d.perm[s])));
    }
    return d;
}

BatchesDemo run_batches_demo(Context& ctx, KernelCache& kc, const BatchesDemoInput& in) {
    const int B = int(in.texts.size());
    if (B < 2) throw Error("lab batches: give at least two sequences");
    if (in.changed < 0 || in.changed >= B) throw Error("lab batches: the changed element must be 0.." + std::to_string(B - 1) + " (B is " +
                                                    std::to_string(B) + "), e.g. --change 2");
    const size_t T = in.texts[0].size();
    byte_tokens(in.replacement, "lab batches: the replacement");  // ASCII, so that its length counts characters
    if (in.replacement.size() != T)
        throw Error("lab batches: the replacement must have T = " + std::to_string(T) + " characters like the others");
    BatchesDemo d;
    d.before = in.texts;
    d.after = in.texts;
    d.after[in.changed] = in.replacement;
    d.changed = in.changed;
    TinyHeadInput m;  // the decoder: position embeddings and the causal mask on
    m.seed = in.seed;
    TinyHeadOutput o1 = run_tiny_head(ctx, kc, m, d.before), o2 = run_tiny_head(ctx, kc, m, d.after);
    const size_t TT = T * T, THS = T * size_t(m.HS);
    for (int b = 0; b < B; b++) {
        d.att_changed.push_back(bits_differ(o1.att, o2.att, b * TT, TT));
        d.out_changed.push_back(bits_differ(o1.out, o2.out, b * THS, THS));
    }
    auto heat = [&](const std::vector<float>& a) {
        return Matrix(int(T), int(T), std::vector<float>(a.begin() + in.changed * TT, a.begin() + (in.changed + 1) * TT));
    };
    d.att_before = heat(o1.att);
    d.att_after = heat(o2.att);
    return d;
}

GraphDemo run_graph_demo(Context& ctx, KernelCache& kc, const GraphDemoInput& in) {
    byte_tokens(in.text, "lab graph: the text");  // ASCII, so that its length counts characters
    const int T = int(in.text.size());
    if (T < 2 || T > 64) throw Error("lab graph: the text must have 2..64 characters (the nodes), e.g. --text \"to be or\"");
    TinyHeadInput m;
    m.causal = in.causal;
    m.seed = in.seed;
    TinyHeadOutput o = run_tiny_head(ctx, kc, m, {in.text});
    const size_t HS = size_t(m.HS);
    GraphDemo d;
    d.text = in.text;
    d.causal = in.causal;
    d.head_size = m.HS;
    d.att = Matrix(T, T, o.att);
    for (int t = 0; t < T; t++) {
        double sum = 0;
        std::vector<double> msg(HS, 0.0);  // the message node t receives: sum over its edges j -> t of w v_j
        for (int j = 0; j < T; j++) {
            float w = d.att.at(t, j);
            if (in.causal && j > t) {  // no edge
                d.max_no_edge = std::max(d.max_no_edge, std::abs(w));
                continue;
            }
            d.edges++;
            sum += w;
            for (size_t c = 0; c < HS; c++) msg[c] += double(w) * o.v[size_t(j) * HS + c];
        }
        d.max_sum_error = std::max(d.max_sum_error, float(std::abs(sum - 1.0)));
        for (size_t c = 0; c < HS; c++)
            d.max_message_error = std::max(d.max_message_error, float(std::abs(o.out[size_t(t) * HS + c] - msg[c])));
    }
    return d;
}

}  // namespace attn::lab
