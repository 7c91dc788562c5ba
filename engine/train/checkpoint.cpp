// safetensors reader/writer for checkpoints: atomic writes, a checksum over the whole file, strict checks.
#include "train/checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "io/files.h"
#include "io/nanogpt.h"
#include "model/model.h"
#include "train/dataset.h"
#include "vk/check.h"

namespace attn {

using json = nlohmann::json;

static const char* CHECKSUM_PLACEHOLDER = "0000000000000000";

static uint64_t fnv1a(const char* data, size_t n, uint64_t h = 0xcbf29ce484222325ull) {
    for (size_t i = 0; i < n; i++) h = (h ^ uint8_t(data[i])) * 0x100000001b3ull;
    return h;
}

static json config_to_json(const Config& c) {
    return {{"preset", c.preset}, {"kind", c.kind == ModelKind::Bigram ? "bigram" : "transformer"},
            {"block_size", c.block_size}, {"n_embd", c.n_embd}, {"n_head", c.n_head}, {"head_size", c.head_size},
            {"n_layer", c.n_layer}, {"ffn", c.ffn}, {"gelu", c.gelu}, {"gelu_tanh", c.gelu_tanh}, {"residual", c.residual}, {"layernorm", c.layernorm},
            {"dropout", c.dropout}, {"causal", c.causal}, {"use_pos", c.use_pos}, {"seed", c.seed},
            {"batch_size", c.batch_size}, {"lr", c.lr}, {"warmup_iters", c.warmup_iters},
            {"lr_decay_iters", c.lr_decay_iters}, {"min_lr", c.min_lr}, {"weight_decay", c.weight_decay}, {"max_iters", c.max_iters},
            {"nanogpt", c.nanogpt}, {"bias", c.bias}, {"beta2", c.beta2}, {"grad_clip", c.grad_clip},
            {"eval_interval", c.eval_interval}, {"eval_iters", c.eval_iters}, {"temperature", c.temperature},
            {"top_k", c.top_k}, {"sample_chars", c.sample_chars}};
}

// A BPE tokenizer as the ids of its 256 bytes, its merges (left, right, result, flat) and its end-of-text id: the
// tokens follow (a byte, or two tokens joined; the end-of-text token is "<|endoftext|>").
static json tokenizer_to_json(const BpeTokenizer& t) {
    std::vector<int> bytes(256, -1), merges;
    for (int id = t.vocab_size() - 1; id >= 0; --id)
        if (id != t.eot() && t.token(id).size() == 1) bytes[uint8_t(t.token(id)[0])] = id;
    for (const BpeMerge& m : t.merges()) merges.insert(merges.end(), {m.left, m.right, m.result});
    return {{"kind", "bpe"}, {"vocab_size", t.vocab_size()}, {"eot", t.eot()}, {"bytes", bytes}, {"merges", merges}};
}

// The tokenizer back, every id checked before it is used and the tokens' total length bounded (a chain of merges
// could otherwise double a token's length at each step). Throws attn::Error with `bad`'s wording.
static std::shared_ptr<const BpeTokenizer> tokenizer_from_json(const json& j, const std::function<Error(const std::string&)>& bad) {
    if (j.value("kind", "") != "bpe") throw bad("holds a tokenizer of an unknown kind");
    const int V = j.at("vocab_size").get<int>(), eot = j.at("eot").get<int>();
    const auto bytes = j.at("bytes").get<std::vector<int>>(), flat = j.at("merges").get<std::vector<int>>();
    if (V < 256 || V > (1 << 20) || bytes.size() != 256 || flat.size() % 3 != 0 || eot < -1 || eot >= V)
        throw bad("holds a damaged tokenizer");
    std::vector<std::string> tokens(static_cast<size_t>(V));
    std::vector<char> made(static_cast<size_t>(V), 0);
    auto fresh = [&](int id) {
        if (id < 0 || id >= V || made[size_t(id)] || id == eot) throw bad("holds a damaged tokenizer");
        made[size_t(id)] = 1;
    };
    for (int b = 0; b < 256; ++b) {
        fresh(bytes[size_t(b)]);
        tokens[size_t(bytes[size_t(b)])] = std::string(1, char(b));
    }
    std::vector<BpeMerge> merges;
    size_t total = 256;
    for (size_t i = 0; i < flat.size(); i += 3) {
        int l = flat[i], r = flat[i + 1], res = flat[i + 2];
        if (l < 0 || l >= V || r < 0 || r >= V || !made[size_t(l)] || !made[size_t(r)]) throw bad("holds a damaged tokenizer");
        fresh(res);
        total += tokens[size_t(l)].size() + tokens[size_t(r)].size();
        if (total > (64u << 20)) throw bad("holds a tokenizer whose tokens are over 64 MiB in all: it was altered");
        tokens[size_t(res)] = tokens[size_t(l)] + tokens[size_t(r)];
        merges.push_back({l, r, res});
    }
    if (eot >= 0) tokens[size_t(eot)] = "<|endoftext|>", made[size_t(eot)] = 1;
    for (char m : made)
        if (!m) throw bad("holds a tokenizer with ids that are neither a byte nor a merge");
    try {
        return std::make_shared<const BpeTokenizer>(std::move(tokens), std::move(merges), eot);
    } catch (const Error& e) {
        throw bad(std::string("holds a tokenizer that is not byte-level BPE: ") + e.what());
    }
}

static Config config_from_json(const json& j) {
    Config c;
    c.preset = j.at("preset").get<std::string>();
    c.kind = j.at("kind").get<std::string>() == "bigram" ? ModelKind::Bigram : ModelKind::Transformer;
    c.block_size = j.at("block_size"); c.n_embd = j.at("n_embd"); c.n_head = j.at("n_head");
    c.head_size = j.at("head_size"); c.n_layer = j.at("n_layer"); c.ffn = j.at("ffn"); c.residual = j.at("residual");
    c.gelu = j.value("gelu", false);  // absent from checkpoints of before GELU: the lecture's ReLU
    c.gelu_tanh = j.value("gelu_tanh", false);  // absent: the exact GELU
    c.layernorm = j.at("layernorm"); c.dropout = j.at("dropout"); c.causal = j.at("causal"); c.use_pos = j.at("use_pos");
    c.seed = j.at("seed"); c.batch_size = j.at("batch_size"); c.lr = j.at("lr"); c.weight_decay = j.at("weight_decay");
    c.warmup_iters = j.value("warmup_iters", 0);  // absent from older checkpoints: a constant lr
    c.lr_decay_iters = j.value("lr_decay_iters", 0);
    c.min_lr = j.value("min_lr", 0.0f);
    c.nanogpt = j.value("nanogpt", false);  // absent from older checkpoints: the lecture's models, AdamW's defaults
    c.bias = j.value("bias", true);
    c.beta2 = j.value("beta2", 0.999f);
    c.grad_clip = j.value("grad_clip", 0.0f);
    c.max_iters = j.at("max_iters"); c.eval_interval = j.at("eval_interval"); c.eval_iters = j.at("eval_iters");
    c.temperature = j.at("temperature"); c.top_k = j.at("top_k"); c.sample_chars = j.at("sample_chars");
    return c;
}

// The tensors' bytes, in the order of their data_offsets.
struct Blob {
    const void* data;
    size_t bytes;
};

// Builds the header entries and blobs of a file's tensors, each after the one before.
struct TensorWriter {
    json header;
    std::vector<Blob> blobs;
    size_t off = 0;  // bytes
    void add(const std::string& name, const char* dtype, const std::vector<int>& shape, const void* data, size_t bytes) {
        header[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {off, off + bytes}}};
        blobs.push_back({data, bytes});
        off += bytes;
    }
};

// Writes header + data to path atomically (files.h), the checksum patched into the header.
static void write_safetensors(const std::string& path, const char* role, json header, const std::vector<Blob>& blobs) {
    header["__metadata__"]["checksum"] = CHECKSUM_PLACEHOLDER;
    std::string h = header.dump();
    while (h.size() % 8) h += ' ';  // safetensors pads the header with spaces to 8 bytes
    uint64_t hlen = h.size();
    // checksum over the whole file with the placeholder in place
    uint64_t sum = fnv1a(reinterpret_cast<const char*>(&hlen), 8);
    sum = fnv1a(h.data(), h.size(), sum);
    for (const Blob& b : blobs) sum = fnv1a(static_cast<const char*>(b.data), b.bytes, sum);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)sum);
    size_t at = h.find(CHECKSUM_PLACEHOLDER);
    h.replace(at, 16, hex);

    write_file_atomic(path, role, [&](FileSink& out) {
        out.put(&hlen, 8);
        out.put(h);
        for (const Blob& b : blobs) out.put(b.data, b.bytes);
    });
}

// The time-lapse as tensors: timelapse.steps (S,) I32, .attention (S, L, NH, P, P) F16, .char_loss (S, P-1) F32,
// .top_ids (S, P, 5) I32, .top_p (S, P, 5) F32, .tokens (P,) I32, and each step's weights .weights (S, flat) F32 or
// BF16 (absent in checkpoints from before they were kept); the probe's text in the metadata. The snapshots' vectors
// are concatenated here (the blobs point into `keep`).
static void add_timelapse(TensorWriter& w, const TimeLapse& tl, std::vector<std::vector<char>>& keep) {
    if (tl.empty()) return;
    int S = int(tl.snapshots().size()), P = tl.length(), L = tl.n_layer(), NH = tl.n_head();
    auto cat = [&](auto member, size_t elem) {
        std::vector<char> out;
        for (const auto& snap : tl.snapshots()) {
            const auto& v = snap.*member;
            const char* b = reinterpret_cast<const char*>(v.data());
            out.insert(out.end(), b, b + v.size() * elem);
        }
        keep.push_back(std::move(out));
        return keep.back().data();
    };
    std::vector<int32_t> steps, toks(tl.tokens().begin(), tl.tokens().end());
    for (const auto& snap : tl.snapshots()) steps.push_back(snap.step);
    auto raw = [&](const auto& v) {
        const char* b = reinterpret_cast<const char*>(v.data());
        keep.emplace_back(b, b + v.size() * sizeof(v[0]));
        return keep.back().data();
    };
    w.add("timelapse.tokens", "I32", {P}, raw(toks), size_t(P) * 4);
    w.add("timelapse.steps", "I32", {S}, raw(steps), size_t(S) * 4);
    w.add("timelapse.attention", "F16", {S, L, NH, P, P}, cat(&ProbeSnapshot::att, 2), size_t(S) * L * NH * P * P * 2);
    w.add("timelapse.char_loss", "F32", {S, P - 1}, cat(&ProbeSnapshot::char_loss, 4), size_t(S) * (P - 1) * 4);
    w.add("timelapse.top_ids", "I32", {S, P, k_probe_top}, cat(&ProbeSnapshot::top_ids, 4), size_t(S) * P * k_probe_top * 4);
    w.add("timelapse.top_p", "F32", {S, P, k_probe_top}, cat(&ProbeSnapshot::top_p, 4), size_t(S) * P * k_probe_top * 4);
    if (tl.has_weights()) {
        const bool bf16 = tl.weights_bf16();
        const size_t flat = tl.weights(0).size(), elem = bf16 ? 2 : 4;
        std::vector<char> all;
        all.reserve(size_t(S) * flat * elem);
        for (int i = 0; i < S; i++) {
            const RecordedWeights& rw = tl.weights(size_t(i));
            if (rw.size() != flat || rw.is_bf16() != bf16) throw Error("the time-lapse's weights differ in size or type");
            const char* b = bf16 ? reinterpret_cast<const char*>(rw.bf16.data()) : reinterpret_cast<const char*>(rw.f32.data());
            all.insert(all.end(), b, b + flat * elem);
        }
        keep.push_back(std::move(all));
        w.add("timelapse.weights", bf16 ? "BF16" : "F32", {S, int(flat)}, keep.back().data(), size_t(S) * flat * elem);
    }
}

void save_checkpoint(const std::string& path, const Checkpoint& ck, const std::vector<ParamInfo>& layout) {
    if (is_torch_zip(path))  // e.g. a nanoGPT ckpt.pt opened with Ctrl+O: never replaced by a file nanoGPT cannot read
        throw Error("'" + path + "' is a PyTorch checkpoint: save to a .safetensors file instead (attnlab export "
                    "nanogpt RUN -o DIR writes nanoGPT's format)");
    TensorWriter w;
    auto add = [&](const std::string& name, const ParamInfo& pi, const std::vector<float>& flat) {
        w.add(name, "F32", pi.shape, flat.data() + pi.offset, pi.count * 4);
    };
    for (const auto& pi : layout) add(pi.name, pi, ck.state.params);
    // AdamW's moments, unless they are all zero (a run imported from weights alone: a third of the file, not two)
    auto zero = [](const std::vector<float>& v) { return std::all_of(v.begin(), v.end(), [](float x) { return x == 0.0f; }); };
    const bool moments = !zero(ck.state.adam_m) || !zero(ck.state.adam_v);
    if (moments) {
        for (const auto& pi : layout) add("optimizer.exp_avg." + pi.name, pi, ck.state.adam_m);
        for (const auto& pi : layout) add("optimizer.exp_avg_sq." + pi.name, pi, ck.state.adam_v);
    }
    json hist = {{"evals", json::array()}, {"step_losses", ck.history.step_losses}};
    for (auto& e : ck.history.evals) hist["evals"].push_back({e.step, e.train, e.val, e.tps});
    if (ck.history.best_val_before) hist["best_val_before"] = *ck.history.best_val_before;
    std::vector<std::vector<char>> keep;
    add_timelapse(w, ck.timelapse, keep);
    json& header = w.header;
    json rng = {{"train", std::vector<uint64_t>(ck.state.rng, ck.state.rng + 4)},
                {"eval", std::vector<uint64_t>(ck.state.eval_rng, ck.state.eval_rng + 4)}};
    // safetensors metadata values are strings: each holds JSON
    header["__metadata__"] = {{"format", "attnlab-checkpoint"}, {"version", std::to_string(CHECKPOINT_VERSION)},
                              {"config", config_to_json(ck.config).dump()}, {"vocab", json(ck.vocab).dump()},
                              {"corpus", ck.corpus}, {"step", std::to_string(ck.state.step)}, {"rng", rng.dump()},
                              {"history", hist.dump()}};
    if (!ck.timelapse.empty())
        header["__metadata__"]["timelapse"] = json{{"probe", ck.timelapse.text()}}.dump();
    if (ck.tokenizer) header["__metadata__"]["tokenizer"] = tokenizer_to_json(*ck.tokenizer).dump();
    if (!moments) header["__metadata__"]["optimizer"] = "zero";
    write_safetensors(path, "the checkpoint", header, w.blobs);
}

void save_tensors(const std::string& path, const std::vector<std::pair<std::string, std::vector<float>>>& tensors,
                  const std::vector<std::vector<int>>& shapes, const std::string& metadata_json) {
    TensorWriter w;
    for (size_t i = 0; i < tensors.size(); i++)
        w.add(tensors[i].first, "F32", shapes[i], tensors[i].second.data(), tensors[i].second.size() * 4);
    w.header["__metadata__"] = {{"format", "attnlab-tensors"}, {"info", metadata_json}};
    write_safetensors(path, "the tensors file", w.header, w.blobs);
}

void check_resumable(const Checkpoint& ck, const std::vector<uint32_t>& vocab, const Config* asked,
                     const std::set<std::string>* given) {
    // a run of BPE tokens reads its corpus through its own tokenizer (Dataset::from_file(path, ck.tokenizer)), whose
    // vocabulary (vocab) is then empty; characters read a BPE run's ids as nothing they were
    if (ck.tokenizer && !vocab.empty())
        throw Error("this run reads byte-level BPE tokens (" + std::to_string(ck.tokenizer->vocab_size()) + " ids), "
                    "and only attnlab --headless opens such runs yet: continue it with attnlab --headless --resume");
    if (!ck.tokenizer && vocab.empty())
        throw Error("the corpus is read as BPE tokens but the checkpoint's run reads characters: leave out --tokenizer");
    if (ck.vocab != vocab) {
        std::string how;  // same size: name a character that differs
        if (ck.vocab.size() == vocab.size()) {
            size_t i = 0;
            while (ck.vocab[i] == vocab[i]) i++;
            auto show = [](uint32_t cp) {  // 'x' (U+0078); control characters by their code alone
                char u[16];
                std::snprintf(u, sizeof u, "(U+%04X)", unsigned(cp));
                std::string out;
                if (cp >= 32) out.append("'").append(encode_utf8(cp)).append("' ");
                out += u;
                return out;
            };
            how = "the same number of characters, " + std::to_string(vocab.size()) + ", but character " +
                  std::to_string(i + 1) + " is " + show(ck.vocab[i]) + " there and " + show(vocab[i]) + " here";
        } else {
            how = std::to_string(ck.vocab.size()) + " characters; this corpus has " + std::to_string(vocab.size());
        }
        throw Error("the checkpoint was trained on a corpus with a different vocabulary (" + how +
                    "): resume with the same --data" + (ck.corpus.empty() ? "" : " (it was '" + ck.corpus + "')"));
    }
    if (!asked) return;
    const Config& a = *asked;
    const Config& c = ck.config;
    // the flag that asked for it: the setting's own if typed, else a typed --preset (a whole model)
    auto differs = [&](const char* what, long long have, long long want, const char* flag) {
        if (have == want) return;
        bool by_preset = given && !given->count(flag) && given->count("--preset");
        std::string by = by_preset ? "--preset " + a.preset : flag;
        throw Error(std::string("the checkpoint's model has ") + what + " " + std::to_string(have) + " but " +
                    std::to_string(want) + " was asked (" + by + "): drop " + by.substr(0, by.find(' ')) +
                    " to resume, or start a new run without --resume");
    };
    auto kind = [](ModelKind k) { return k == ModelKind::Bigram ? "a bigram model" : "a transformer"; };
    if (c.kind != a.kind)
        throw Error(std::string("the checkpoint holds ") + kind(c.kind) + " but " + kind(a.kind) + " was asked (--preset " +
                    a.preset + "): drop --preset to resume, or start a new run without --resume");
    differs("block_size", c.block_size, a.block_size, "--block-size");
    if (c.kind == ModelKind::Bigram) return;
    if (c.nanogpt != a.nanogpt)
        throw Error(std::string("the checkpoint holds ") + (c.nanogpt ? "nanoGPT's GPT" : "a lecture model") + " but " +
                    (a.nanogpt ? "nanoGPT's GPT" : "a lecture model") + " was asked (--preset " + a.preset +
                    "): drop --preset to resume, or start a new run without --resume");
    if (c.nanogpt) differs("bias", c.bias, a.bias, "--bias");
    differs("n_embd", c.n_embd, a.n_embd, "--n-embd");
    differs("n_head", c.n_head, a.n_head, "--n-head");
    differs("head_size", c.hs(), a.hs(), "--head-size");
    differs("n_layer", c.n_layer, a.n_layer, "--n-layer");
    differs("ffn", c.ffn, a.ffn, "--ffn");
    if (c.ffn) differs("gelu", c.gelu, a.gelu, "--activation");
    if (c.ffn && c.gelu && a.gelu) differs("gelu_tanh", c.gelu_tanh, a.gelu_tanh, "--activation");
    differs("residual", c.residual, a.residual, "--residual");
    differs("layernorm", c.layernorm, a.layernorm, "--layernorm");
    differs("position embeddings", c.use_pos, a.use_pos, "--no-pos");
}

Checkpoint load_checkpoint(const std::string& path, const std::vector<uint32_t>* corpus_vocab, std::string* note) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw Error("checkpoint '" + path + "' does not exist or is not a file");
    if (is_torch_zip(path)) return import_nanogpt(path, "", corpus_vocab, note);  // nanoGPT's ckpt.pt
    // a read that fails (EIO) is "cannot read 'PATH': Input/output error", not an exception the caller did not expect
    std::string bytes = read_file(path, "checkpoint");
    return parse_checkpoint(bytes, path);
}

// The time-lapse tensors (add_timelapse), checked against each other and the model's shape.
template <typename Bad>
static void read_timelapse(Checkpoint& ck, const json& header, const json& meta, const char* data, size_t data_len,
                           const Bad& bad) {
    auto tensor = [&](const std::string& name, const char* dtype, size_t elem, std::vector<int> shape) {
        if (!header.contains(name)) throw bad("lacks tensor '" + name + "' of its time-lapse");
        const json& t = header[name];
        if (t.value("dtype", "") != dtype || t.at("shape").get<std::vector<int>>() != shape)
            throw bad("tensor '" + name + "' has the wrong type or shape");
        size_t n = elem;
        for (int d : shape) n *= size_t(d);
        auto o = t.at("data_offsets").get<std::vector<size_t>>();
        if (o.size() != 2 || o[1] < o[0] || o[1] > data_len || o[1] - o[0] != n) throw bad("tensor '" + name + "' points outside the file");
        return std::make_pair(data + o[0], n);
    };
    try {
        int S = header.at("timelapse.steps").at("shape").at(0).get<int>();
        int P = header.at("timelapse.tokens").at("shape").at(0).get<int>();
        const Config& c = ck.config;
        int L = c.kind == ModelKind::Bigram ? 0 : c.n_layer, NH = c.kind == ModelKind::Bigram ? 0 : c.n_head;
        if (S < 1 || P < 1 || P > c.block_size) throw bad("holds a time-lapse of a shape its model cannot have");
        auto copy = [](auto& v, std::pair<const char*, size_t> src, size_t at, size_t count) {
            v.resize(count);
            // a bigram's attention has no elements: v.data() may then be null, which memcpy must not get even for 0
            if (count > 0) std::memcpy(v.data(), src.first + at * sizeof(v[0]), count * sizeof(v[0]));
        };
        std::vector<int32_t> toks, steps;
        copy(toks, tensor("timelapse.tokens", "I32", 4, {P}), 0, size_t(P));
        copy(steps, tensor("timelapse.steps", "I32", 4, {S}), 0, size_t(S));
        auto att = tensor("timelapse.attention", "F16", 2, {S, L, NH, P, P});
        auto loss = tensor("timelapse.char_loss", "F32", 4, {S, P - 1});
        auto ids = tensor("timelapse.top_ids", "I32", 4, {S, P, k_probe_top});
        auto tp = tensor("timelapse.top_p", "F32", 4, {S, P, k_probe_top});
        std::vector<uint32_t> tokens;
        for (int32_t t : toks) {
            if (t < 0 || t >= checkpoint_vocab_size(ck)) throw bad("holds a time-lapse probe outside its vocabulary");
            tokens.push_back(uint32_t(t));
        }
        std::string text = json::parse(meta.at("timelapse").get<std::string>()).at("probe").get<std::string>();
        ck.timelapse.reset(std::move(tokens), std::move(text), L, NH);
        ck.timelapse.set_budget(~size_t(0));  // as saved; the run that resumes it sets its own
        size_t natt = size_t(L) * NH * P * P, nloss = size_t(P - 1), ntop = size_t(P) * k_probe_top;
        // each step's weights, when kept: (S, flat) of the model's layout, F32 or BF16
        std::pair<const char*, size_t> weights{nullptr, 0};
        bool bf16 = false;
        const size_t flat = ck.state.params.size();
        if (header.contains("timelapse.weights")) {
            bf16 = header["timelapse.weights"].value("dtype", "") == "BF16";
            weights = tensor("timelapse.weights", bf16 ? "BF16" : "F32", bf16 ? 2 : 4, {S, int(flat)});
        }
        for (int i = 0; i < S; i++) {
            // a step no run reaches (a negative one, INT_MIN) would be picked by --step 0 and overflow distances
            if (steps[i] < 0 || steps[i] > k_max_checkpoint_step)
                throw bad("holds a time-lapse snapshot at step " + std::to_string(steps[i]) + ", outside any run (0 to " +
                          std::to_string(k_max_checkpoint_step) + "): it was altered or damaged");
            ProbeSnapshot snap;
            snap.step = steps[i];
            copy(snap.att, att, i * natt, natt);
            copy(snap.char_loss, loss, i * nloss, nloss);
            copy(snap.top_ids, ids, i * ntop, ntop);
            copy(snap.top_p, tp, i * ntop, ntop);
            RecordedWeights rw;
            if (weights.first && bf16) copy(rw.bf16, weights, i * flat, flat);
            else if (weights.first) copy(rw.f32, weights, i * flat, flat);
            for (float f : rw.f32)  // a weight that is not finite would replay as NaN everywhere
                if (!std::isfinite(f)) throw bad("holds time-lapse weights that are not finite: it was altered or damaged");
            ck.timelapse.add(std::move(snap), std::move(rw));
        }
    } catch (const Error&) {
        throw;
    } catch (const std::exception&) {
        throw bad("has a damaged time-lapse");
    }
}

static Checkpoint parse_checkpoint_checked(const std::string& bytes, const std::string& path);

Checkpoint parse_checkpoint(const std::string& bytes, const std::string& path) {
    try {
        return parse_checkpoint_checked(bytes, path);
    } catch (const Error&) {
        throw;
    } catch (const std::bad_alloc&) {
        throw Error("checkpoint '" + path + "' is too large to read into memory");
    } catch (const std::exception&) {  // a JSON value of the wrong type anywhere the checks above did not foresee
        throw Error("checkpoint '" + path + "' has a damaged header (a value of the wrong type)");
    }
}

static Checkpoint parse_checkpoint_checked(const std::string& bytes, const std::string& path) {
    auto bad = [&](const std::string& why) { return Error("checkpoint '" + path + "' " + why); };
    if (bytes.size() < 8) throw bad("is truncated (" + std::to_string(bytes.size()) + " bytes): it is not a safetensors file");
    uint64_t hlen;
    std::memcpy(&hlen, bytes.data(), 8);
    // no limit but the file's size: the header grows with the loss history (~19 bytes a step), and a reader that
    // refused what the writer wrote would lose a long run at its next save
    if (hlen > bytes.size() - 8) throw bad("is truncated or not a safetensors file (header length " + std::to_string(hlen) + ")");
    std::string h = bytes.substr(8, hlen);
    json header = json::parse(h, nullptr, false);
    if (header.is_discarded() || !header.is_object() || !header.contains("__metadata__"))
        throw bad("has a damaged header (not valid safetensors JSON)");
    const json& meta = header["__metadata__"];
    if (!meta.is_object() || meta.value("format", "") != "attnlab-checkpoint") throw bad("is not an Attention Lab checkpoint");
    std::string version = meta.value("version", "");
    if (version != std::to_string(CHECKPOINT_VERSION))
        throw bad("has format version " + version + "; this build reads version " + std::to_string(CHECKPOINT_VERSION));
    std::string stored = meta.value("checksum", "");
    size_t at = h.find("\"checksum\":\"" + stored + "\"");
    if (stored.size() != 16 || at == std::string::npos) throw bad("has no valid checksum");
    std::string h0 = h;
    h0.replace(at + 12, 16, CHECKSUM_PLACEHOLDER);
    uint64_t sum = fnv1a(bytes.data(), 8);
    sum = fnv1a(h0.data(), h0.size(), sum);
    sum = fnv1a(bytes.data() + 8 + hlen, bytes.size() - 8 - hlen, sum);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)sum);
    if (stored != hex) throw bad("is corrupted (checksum mismatch: truncated or altered after it was written)");

    Checkpoint ck;
    try {
        ck.config = config_from_json(json::parse(meta.at("config").get<std::string>()));
        for (const json& v : json::parse(meta.at("vocab").get<std::string>())) {
            // Unicode scalar values only: a negative or surrogate entry would print as raw bytes
            if (!v.is_number_unsigned() || v.get<uint64_t>() > 0x10FFFF || (v.get<uint64_t>() >= 0xD800 && v.get<uint64_t>() < 0xE000))
                throw Error("checkpoint '" + path + "' holds a vocabulary entry that is not a Unicode character (" + v.dump() +
                            "): it was altered or damaged");
            ck.vocab.push_back(v.get<uint32_t>());
        }
        ck.corpus = meta.value("corpus", "");
        if (meta.contains("tokenizer")) ck.tokenizer = tokenizer_from_json(json::parse(meta.at("tokenizer").get<std::string>()), bad);
        ck.state.step = std::stoi(meta.at("step").get<std::string>());
        if (ck.state.step < 0) throw std::runtime_error("step");
        json rng = json::parse(meta.at("rng").get<std::string>());
        auto r = rng.at("train").get<std::vector<uint64_t>>(), e = rng.at("eval").get<std::vector<uint64_t>>();
        if (r.size() != 4 || e.size() != 4) throw std::runtime_error("rng");
        for (int i = 0; i < 4; i++) { ck.state.rng[i] = r[i]; ck.state.eval_rng[i] = e[i]; }
        json hist = json::parse(meta.at("history").get<std::string>());
        ck.history.step_losses = hist.at("step_losses").get<std::vector<float>>();
        for (auto& ev : hist.at("evals"))  // [step, train, val, tokens/s]; checkpoints before tokens/s: 3 values
            ck.history.evals.push_back({ev.at(0).get<int>(), ev.at(1).get<double>(), ev.at(2).get<double>(),
                                        ev.size() > 3 && ev.at(3).is_number() ? ev.at(3).get<double>() : -1.0});
        if (hist.contains("best_val_before")) {
            double b = hist.at("best_val_before").get<double>();
            if (!std::isfinite(b) || b < 0) throw std::runtime_error("best_val_before");
            ck.history.best_val_before = b;
        }
    } catch (const Error&) {
        throw;
    } catch (const std::exception&) {
        throw bad("has damaged metadata");
    }
    // ranges a run can have: a crafted file with a valid checksum must not overflow or silently misbehave
    if (ck.state.step > k_max_checkpoint_step)
        throw bad("is at step " + std::to_string(ck.state.step) + ", beyond any run (at most " +
                  std::to_string(k_max_checkpoint_step) + "): it was altered or damaged");
    auto all_zero = [](const uint64_t* r) { return (r[0] | r[1] | r[2] | r[3]) == 0; };
    if (all_zero(ck.state.rng) || all_zero(ck.state.eval_rng))
        throw bad("holds an all-zero random-number state (every batch would be the same one): it was altered or damaged");
    auto errs = validate(ck.config);
    if (!errs.empty()) throw bad("holds an invalid config: " + errs.front().message);
    if (ck.tokenizer ? !ck.vocab.empty() : ck.vocab.size() < 2)
        throw bad(ck.tokenizer ? "holds both a tokenizer and characters" : "holds an empty vocabulary");
    size_t max_floats = bytes.size() / 4;  // a config must not ask for more than the file can hold
    ModelLayout L = make_layout(ck.config, std::min(checkpoint_vocab_size(ck), 1 << 21));
    if (L.flat > max_floats) throw bad("holds a config larger than its data (truncated or altered)");
    ck.state.params.assign(L.flat, 0.0f);
    ck.state.adam_m.assign(L.flat, 0.0f);
    ck.state.adam_v.assign(L.flat, 0.0f);
    const char* data = bytes.data() + 8 + hlen;
    size_t data_len = bytes.size() - 8 - hlen;
    // kind: what its values may be (0 any finite, 1 finite and >= 0: AdamW's second moments)
    auto read = [&](const std::string& name, const ParamInfo& pi, std::vector<float>& flat, int kind) {
        if (!header.contains(name)) throw bad("lacks tensor '" + name + "' that its config needs");
        const json& t = header[name];
        std::vector<size_t> o;
        try {
            if (!t.is_object()) throw std::runtime_error("not an object");
            if (t.value("dtype", "") != "F32") throw bad("tensor '" + name + "' is not F32");
            if (t.at("shape").get<std::vector<int>>() != pi.shape) throw bad("tensor '" + name + "' has the wrong shape for its config");
            o = t.at("data_offsets").get<std::vector<size_t>>();
        } catch (const Error&) {
            throw;
        } catch (const std::exception&) {  // a number where an object, or a string where a list, belongs
            throw bad("has a damaged entry for tensor '" + name + "' (not {dtype, shape, data_offsets})");
        }
        if (o.size() != 2 || o[1] < o[0] || o[1] > data_len || o[1] - o[0] != pi.count * 4) throw bad("tensor '" + name + "' points outside the file");
        float* dst = flat.data() + pi.offset;
        std::memcpy(dst, data + o[0], pi.count * 4);
        for (size_t i = 0; i < pi.count; i++) {
            if (!std::isfinite(dst[i]))
                throw bad("holds NaN or Inf in '" + name + "': the run had diverged or the file was altered; resume an earlier checkpoint");
            if (kind == 1 && dst[i] < 0)
                throw bad("holds a negative AdamW second moment in '" + name + "' (a square cannot be): it was altered or damaged");
        }
    };
    // "optimizer": "zero": the moments were all zero and are not stored (ck.state's are zero already)
    const bool moments = !(meta.contains("optimizer") && meta["optimizer"].is_string() && meta["optimizer"] == "zero");
    for (const auto& pi : L.info) {
        read(pi.name, pi, ck.state.params, 0);
        if (!moments) continue;
        read("optimizer.exp_avg." + pi.name, pi, ck.state.adam_m, 0);
        read("optimizer.exp_avg_sq." + pi.name, pi, ck.state.adam_v, 1);
    }
    if (header.contains("timelapse.steps")) read_timelapse(ck, header, meta, data, data_len, bad);
    return ck;
}

}  // namespace attn
