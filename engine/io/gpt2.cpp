// GPT-2's weights from Hugging Face's safetensors and llm.c's .bin, and out to llm.c's .bin (see gpt2.h).
#include "io/gpt2.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "io/files.h"
#include "model/model.h"
#include "rng.h"
#include "text/bpe_files.h"
#include "train/timelapse.h"
#include "vk/check.h"

namespace attn {

namespace fs = std::filesystem;
using json = nlohmann::json;

Config gpt2_config(int n_layer, int n_head, int n_embd, int block_size) {
    Config c;
    c.apply_preset("nanogpt-char");
    c.bias = true;
    c.gelu_tanh = true;
    c.n_layer = n_layer;
    c.n_head = n_head;
    c.n_embd = n_embd;
    c.block_size = block_size;
    c.dropout = 0.0f;
    // nanoGPT's config/finetune_shakespeare.py: a small constant learning rate, no decay
    c.lr = 3e-5f;
    c.warmup_iters = 0;
    c.lr_decay_iters = 0;
    c.min_lr = 0.0f;
    c.max_iters = 20;
    c.batch_size = 1;
    c.eval_interval = 5;
    c.eval_iters = 40;
    c.preset = "nanogpt-char";
    return c;
}

// A file read by offset, each read checked against its size: a header's claims are checked before anything they
// size is allocated.
class InFile {
public:
    InFile(const std::string& path, const std::string& what) : m_path(path) {
        std::error_code ec;
        if (!fs::is_regular_file(path, ec)) throw Error(what + " '" + path + "' does not exist or is not a file");
        m_size = fs::file_size(path, ec);
        if (ec) throw Error("cannot read " + what + " '" + path + "': " + ec.message());
        m_f.open(path, std::ios::binary);
        if (!m_f) throw Error("cannot read " + what + " '" + path + "': " + std::strerror(errno));
    }
    uint64_t size() const { return m_size; }
    void read(uint64_t offset, void* dst, size_t n) {
        if (offset > m_size || n > m_size - offset) throw Error("'" + m_path + "' is truncated");
        m_f.seekg(std::streamoff(offset));
        if (!m_f.read(static_cast<char*>(dst), std::streamsize(n)))
            throw Error("cannot read '" + m_path + "': " + std::strerror(errno));
    }

private:
    std::string m_path;
    uint64_t m_size = 0;
    std::ifstream m_f;
};

enum class DType { F32, F16, BF16 };
static size_t dtype_size(DType d) { return d == DType::F32 ? 4 : 2; }

// n values of dtype d from raw little-endian bytes into floats.
static void to_floats(const char* src, DType d, size_t n, float* dst) {
    for (size_t i = 0; i < n; i++) {
        if (d == DType::F32) {
            std::memcpy(&dst[i], src + 4 * i, 4);
        } else {
            uint16_t h;
            std::memcpy(&h, src + 2 * i, 2);
            dst[i] = d == DType::BF16 ? bf16_to_float(h) : half_to_float(h);
        }
    }
}

// A fresh TrainerState for layout L: zero moments at step 0, the RNGs seeded as a new Trainer seeds them.
static TrainerState fresh_state(const Config& c, size_t flat) {
    TrainerState st;
    st.params.assign(flat, 0.0f);
    st.adam_m.assign(flat, 0.0f);
    st.adam_v.assign(flat, 0.0f);
    Rng rng(c.seed), eval_rng(c.seed ^ 0x5eedULL);
    for (int i = 0; i < 4; i++) {
        st.rng[i] = rng.state()[i];
        st.eval_rng[i] = eval_rng.state()[i];
    }
    return st;
}

static std::string shape_text(const std::vector<int64_t>& s) {
    std::string t = "(";
    for (size_t i = 0; i < s.size(); i++) t += (i ? ", " : "") + std::to_string(s[i]);
    return t + ")";
}

// The parameter count a config makes, and the refusal of more than Attention Lab opens.
static ModelLayout checked_layout(const Config& c, int V, const std::string& path) {
    if (auto errs = validate(c); !errs.empty())
        throw Error("'" + path + "': its model cannot be opened here: " + errs.front().message);
    ModelLayout L = make_layout(c, V);
    if (L.flat > (size_t(1) << 31))
        throw Error("'" + path + "' holds " + std::to_string(L.flat) + " parameters, more than Attention Lab opens");
    return L;
}

static void check_finite(const float* x, size_t n, const std::string& path, const std::string& name) {
    for (size_t i = 0; i < n; i++)
        if (!std::isfinite(x[i]))
            throw Error("'" + path + "': tensor '" + name + "' holds " + (std::isnan(x[i]) ? "NaN" : "an infinite value") +
                        " at element " + std::to_string(i) + ": it cannot be run");
}

// --- Hugging Face -------------------------------------------------------------------------------------------------

namespace {
struct StTensor {
    DType dtype;
    std::vector<int64_t> shape;
    uint64_t begin = 0, end = 0;  // within the data section
    uint64_t numel() const {
        uint64_t n = 1;
        for (int64_t d : shape) n *= uint64_t(d);
        return n;
    }
};
}  // namespace

static bool ends_with(const std::string& s, const char* suffix) {
    size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

ImportedModel read_hf_gpt2(const std::string& given) {
    std::error_code ec;
    std::string path = given;
    if (fs::is_directory(given, ec)) {
        path = (fs::path(given) / "model.safetensors").string();
        if (!fs::is_regular_file(path, ec))
            throw Error("folder '" + given + "' has no model.safetensors: give Hugging Face's GPT-2 folder (model.safetensors, "
                        "config.json and the tokenizer's vocab.json + merges.txt) or the .safetensors file");
    }
    register_file("the GPT-2 model", path);
    InFile f(path, "the GPT-2 model");
    auto bad = [&](const std::string& why) { return Error("'" + path + "' is not Hugging Face's GPT-2 safetensors: " + why); };
    if (f.size() < 8) throw bad("it is shorter than the 8-byte header length");
    uint64_t hlen = 0;
    f.read(0, &hlen, 8);
    if (hlen > f.size() - 8 || hlen > (uint64_t(100) << 20)) throw bad("its header length " + std::to_string(hlen) + " is past the file's end");
    std::string htext(size_t(hlen), '\0');
    f.read(8, htext.data(), htext.size());
    json header = json::parse(htext, nullptr, false);
    if (header.is_discarded() || !header.is_object()) throw bad("its header is not a JSON object");
    const uint64_t data0 = 8 + hlen, data_len = f.size() - data0;

    // the tensors, by GPT-2's names without GPT2LMHeadModel's "transformer." (the mask buffers left out)
    std::map<std::string, StTensor> tensors;
    for (auto& [key, t] : header.items()) {
        if (key == "__metadata__") continue;
        std::string name = key.rfind("transformer.", 0) == 0 ? key.substr(12) : key;
        if (ends_with(name, ".attn.bias") || ends_with(name, ".attn.masked_bias")) continue;
        if (!t.is_object() || !t.contains("dtype") || !t.contains("shape") || !t.contains("data_offsets") ||
            !t["dtype"].is_string() || !t["shape"].is_array() || !t["data_offsets"].is_array() || t["data_offsets"].size() != 2)
            throw bad("tensor '" + key + "' lacks dtype, shape or data_offsets");
        StTensor st;
        std::string dt = t["dtype"].get<std::string>();
        if (dt == "F32") st.dtype = DType::F32;
        else if (dt == "F16") st.dtype = DType::F16;
        else if (dt == "BF16") st.dtype = DType::BF16;
        else throw bad("tensor '" + key + "' is " + dt + ": GPT-2's tensors are F32, F16 or BF16");
        uint64_t numel = 1;
        for (const json& d : t["shape"]) {
            if (!d.is_number_unsigned() || d.get<uint64_t>() > (uint64_t(1) << 31)) throw bad("tensor '" + key + "' has a bad shape");
            st.shape.push_back(int64_t(d.get<uint64_t>()));
            numel *= std::max<uint64_t>(1, d.get<uint64_t>());
            if (numel > (uint64_t(1) << 40)) throw bad("tensor '" + key + "' has a bad shape");
        }
        for (const json& o : t["data_offsets"])
            if (!o.is_number_unsigned()) throw bad("tensor '" + key + "' has bad data_offsets");
        st.begin = t["data_offsets"][0].get<uint64_t>();
        st.end = t["data_offsets"][1].get<uint64_t>();
        if (st.begin > st.end || st.end > data_len)
            throw bad("tensor '" + key + "' lies past the file's end (" + std::to_string(data_len) + " bytes of data)");
        if (st.end - st.begin != st.numel() * dtype_size(st.dtype))
            throw bad("tensor '" + key + "' has " + std::to_string(st.end - st.begin) + " bytes for shape " + shape_text(st.shape));
        if (!tensors.emplace(name, st).second) throw bad("tensor '" + name + "' appears twice");
    }
    auto shape_of = [&](const std::string& name, size_t dims) -> std::vector<int64_t> {
        auto it = tensors.find(name);
        if (it == tensors.end()) throw bad("it has no tensor '" + name + "'");
        if (it->second.shape.size() != dims) throw bad("tensor '" + name + "' has shape " + shape_text(it->second.shape));
        return it->second.shape;
    };
    const std::vector<int64_t> wte = shape_of("wte.weight", 2);
    const std::vector<int64_t> wpe = shape_of("wpe.weight", 2);
    const int64_t V = wte[0], C = wte[1], T = wpe[0];
    if (wpe[1] != C) throw bad("wte is " + shape_text(wte) + " but wpe " + shape_text(wpe));
    int n_layer = 0;
    while (tensors.count("h." + std::to_string(n_layer) + ".ln_1.weight")) n_layer++;
    if (n_layer == 0) throw bad("it has no blocks (h.0.ln_1.weight)");

    // config.json beside it: the head count, the activation and LayerNorm's epsilon
    int64_t n_head = C % 64 == 0 ? C / 64 : 0;  // GPT-2's head size at every size
    bool tanh_form = true;
    fs::path cfg_path = fs::path(path).parent_path() / "config.json";
    if (fs::is_regular_file(cfg_path, ec)) {
        json cj = json::parse(read_file(cfg_path.string(), "GPT-2's config.json", 1 << 20), nullptr, false);
        auto cbad = [&](const std::string& why) { return Error("'" + cfg_path.string() + "': " + why); };
        if (cj.is_discarded() || !cj.is_object()) throw cbad("it is not a JSON object");
        if (cj.contains("n_head")) {
            if (!cj["n_head"].is_number_integer() || cj["n_head"].get<int64_t>() < 1) throw cbad("n_head is not a positive integer");
            n_head = cj["n_head"].get<int64_t>();
        }
        if (cj.contains("activation_function")) {
            std::string act = cj["activation_function"].is_string() ? cj["activation_function"].get<std::string>() : "?";
            if (act == "gelu") tanh_form = false;
            else if (act != "gelu_new" && act != "gelu_pytorch_tanh")
                throw cbad("activation_function '" + act + "' is not GPT-2's (gelu_new) or the exact GELU (gelu)");
        }
        if (cj.contains("layer_norm_epsilon")) {
            double eps = cj["layer_norm_epsilon"].is_number() ? cj["layer_norm_epsilon"].get<double>() : -1;
            if (std::fabs(eps - 1e-5) > 1e-12)
                throw cbad("layer_norm_epsilon is " + cj["layer_norm_epsilon"].dump() + "; Attention Lab's LayerNorm uses GPT-2's 1e-5");
        }
    } else if (n_head == 0) {
        throw bad("n_embd " + std::to_string(C) + " is not a multiple of GPT-2's head size 64 and there is no config.json "
                  "beside it to give n_head");
    }
    if (n_head < 1 || C % n_head != 0)
        throw bad("n_embd " + std::to_string(C) + " does not split into " + std::to_string(n_head) + " heads");
    if (V < 1 || V > (int64_t(1) << 20) || C > 4096 || T > 4096 || n_head > 64)
        throw bad("its sizes (vocabulary " + std::to_string(V) + ", n_embd " + std::to_string(C) + ", positions " +
                  std::to_string(T) + ") are past what Attention Lab opens");
    Config c = gpt2_config(n_layer, int(n_head), int(C), int(T));
    c.gelu_tanh = tanh_form;
    ModelLayout L = checked_layout(c, int(V), path);

    // every tensor of the model there, in its shape (Conv1D's transposed), before anything is read
    auto conv1d = [](const std::string& n) {
        return ends_with(n, "attn.c_attn.weight") || ends_with(n, "attn.c_proj.weight") || ends_with(n, "mlp.c_fc.weight") ||
               ends_with(n, "mlp.c_proj.weight");
    };
    for (const ParamInfo& pi : L.info) {
        std::string name = pi.name.substr(12);  // "transformer."
        auto it = tensors.find(name);
        if (it == tensors.end()) throw bad("it lacks tensor '" + name + "' (it has " + std::to_string(n_layer) + " blocks)");
        std::vector<int64_t> want(pi.shape.begin(), pi.shape.end());
        if (conv1d(name)) std::reverse(want.begin(), want.end());
        if (it->second.shape != want)
            throw bad("tensor '" + name + "' has shape " + shape_text(it->second.shape) + ", GPT-2 of n_embd " + std::to_string(C) +
                      " makes it " + shape_text(want));
    }
    ImportedModel m;
    m.model_vocab = int(V);
    TrainerState st = fresh_state(c, L.flat);
    std::vector<char> raw;
    std::vector<float> vals;
    auto load = [&](const std::string& name, const StTensor& t) {
        raw.resize(size_t(t.end - t.begin));
        f.read(data0 + t.begin, raw.data(), raw.size());
        vals.resize(size_t(t.numel()));
        to_floats(raw.data(), t.dtype, vals.size(), vals.data());
        check_finite(vals.data(), vals.size(), path, name);
    };
    for (const ParamInfo& pi : L.info) {
        std::string name = pi.name.substr(12);
        auto it = tensors.find(name);
        load(name, it->second);
        float* dst = st.params.data() + pi.offset;
        if (conv1d(name)) {  // stored (in, out): ours is (out, in)
            const size_t out = size_t(pi.shape[0]), in = size_t(pi.shape[1]);
            for (size_t i = 0; i < in; i++)
                for (size_t o = 0; o < out; o++) dst[o * in + i] = vals[i * out + o];
        } else {
            std::copy(vals.begin(), vals.end(), dst);
        }
        tensors.erase(it);
    }
    if (auto it = tensors.find("lm_head.weight"); it != tensors.end()) {  // GPT2LMHeadModel's: the same as wte
        if (it->second.shape != wte) throw bad("lm_head.weight's shape differs from wte's");
        load("lm_head.weight", it->second);
        const ParamInfo& w = L.info[0];
        for (size_t i = 0; i < w.count; i++)
            if (vals[i] != st.params[w.offset + i]) throw bad("lm_head.weight differs from wte.weight, but GPT-2 ties them");
        tensors.erase(it);
    }
    if (!tensors.empty()) throw bad("tensor '" + tensors.begin()->first + "' is not part of GPT-2");
    m.ck.config = c;
    m.ck.state = std::move(st);
    return m;
}

// --- llm.c ----------------------------------------------------------------------------------------------------------

static constexpr int32_t k_llmc_magic = 20240326;

// llm.c's tensor kinds in file order, with the name of each layer's tensor (nanoGPT's), its rows per layer as a
// multiple of C and its columns (0: a vector).
struct LlmcKind {
    const char* name;
    int rows_c, cols_c;
};
static const LlmcKind k_llmc_layer_kinds[] = {
    {"ln_1.weight", 1, 0},       {"ln_1.bias", 1, 0},       {"attn.c_attn.weight", 3, 1}, {"attn.c_attn.bias", 3, 0},
    {"attn.c_proj.weight", 1, 1}, {"attn.c_proj.bias", 1, 0}, {"ln_2.weight", 1, 0},       {"ln_2.bias", 1, 0},
    {"mlp.c_fc.weight", 4, 1},   {"mlp.c_fc.bias", 4, 0},   {"mlp.c_proj.weight", 1, 4},  {"mlp.c_proj.bias", 1, 0},
};

// The floats llm.c's file holds after its header.
static uint64_t llmc_floats(uint64_t Vp, uint64_t T, uint64_t L, uint64_t C) {
    return Vp * C + T * C + L * (12 * C * C + 13 * C) + 2 * C;
}

ImportedModel read_llmc(const std::string& path) {
    register_file("the llm.c model", path);
    InFile f(path, "the llm.c model");
    auto bad = [&](const std::string& why) { return Error("'" + path + "' is not an llm.c checkpoint: " + why); };
    int32_t h[256];
    if (f.size() < sizeof h) throw bad("it is shorter than llm.c's 1024-byte header");
    f.read(0, h, sizeof h);
    if (h[0] != k_llmc_magic)
        throw bad("its magic is " + std::to_string(h[0]) + ", not 20240326 (a tokenizer .bin goes to --tokenizer; a data "
                  "shard is not a model)");
    if (h[1] != 3 && h[1] != 5) throw bad("version " + std::to_string(h[1]) + " is neither 3 (fp32) nor 5 (bf16)");
    const int T = h[2], V = h[3], L = h[4], NH = h[5], C = h[6], Vp = h[7];
    if (T < 1 || V < 1 || L < 1 || NH < 1 || C < 1 || Vp < V || T > 1024 || V > (1 << 20) || Vp > (1 << 20) + 4096 ||
        L > 48 || NH > 64 || C > 4096 || C % NH != 0)
        throw bad("its header's sizes (max_seq_len " + std::to_string(T) + ", vocab " + std::to_string(V) + " padded to " +
                  std::to_string(Vp) + ", layers " + std::to_string(L) + ", heads " + std::to_string(NH) + ", channels " +
                  std::to_string(C) + ") are not a model Attention Lab opens");
    const DType dt = h[1] == 3 ? DType::F32 : DType::BF16;
    const uint64_t want = sizeof h + llmc_floats(uint64_t(Vp), uint64_t(T), uint64_t(L), uint64_t(C)) * dtype_size(dt);
    if (f.size() != want)
        throw bad(std::string("its header makes it ") + std::to_string(want) + " bytes but it has " + std::to_string(f.size()) +
                  (f.size() < want ? " (truncated)" : ""));
    Config c = gpt2_config(L, NH, C, T);
    ModelLayout lay = checked_layout(c, V, path);
    std::map<std::string, const ParamInfo*> by_name;
    for (const ParamInfo& pi : lay.info) by_name[pi.name] = &pi;
    ImportedModel m;
    m.model_vocab = V;
    TrainerState st = fresh_state(c, lay.flat);
    const size_t ds = dtype_size(dt);
    uint64_t pos = sizeof h;
    std::vector<char> raw;
    // n floats at the file's position into dst (then past them)
    auto take = [&](float* dst, size_t n, const std::string& name) {
        raw.resize(n * ds);
        f.read(pos, raw.data(), raw.size());
        to_floats(raw.data(), dt, n, dst);
        check_finite(dst, n, path, name);
        pos += n * ds;
    };
    auto param = [&](const std::string& name) -> float* { return st.params.data() + by_name.at("transformer." + name)->offset; };
    take(param("wte.weight"), size_t(V) * size_t(C), "wte");
    pos += uint64_t(Vp - V) * uint64_t(C) * ds;  // the padding rows
    take(param("wpe.weight"), size_t(T) * size_t(C), "wpe");
    for (const LlmcKind& k : k_llmc_layer_kinds)
        for (int l = 0; l < L; l++) {
            const std::string name = "h." + std::to_string(l) + "." + k.name;
            take(param(name), size_t(k.rows_c) * size_t(C) * size_t(k.cols_c ? k.cols_c * C : 1), name);
        }
    take(param("ln_f.weight"), size_t(C), "ln_f.weight");
    take(param("ln_f.bias"), size_t(C), "ln_f.bias");
    m.ck.config = c;
    m.ck.state = std::move(st);
    return m;
}

void export_llmc(const Checkpoint& ck, const std::string& path, bool force) {
    const Config& c = ck.config;
    if (c.kind != ModelKind::Transformer || !c.nanogpt || !c.bias)
        throw Error("llm.c runs GPT-2 (nanoGPT's GPT with biases): this run is " + c.describe() +
                    (c.nanogpt ? " without biases" : ", whose layers llm.c does not have") +
                    "; export an imported GPT-2 or llm.c run, or one of --preset nanogpt-char with biases");
    if (!c.gelu_tanh)
        throw Error("llm.c runs GELU's tanh form and this run the exact GELU: its weights would compute something else "
                    "there; export a run with --activation gelu-tanh (or an imported GPT-2 or llm.c run)");
    const int V = checkpoint_vocab_size(ck), C = c.n_embd, L = c.n_layer, T = c.block_size;
    const int Vp = (V + 127) / 128 * 128;
    ModelLayout lay = make_layout(c, V);
    if (ck.state.params.size() != lay.flat) throw Error("the run's saved state does not fit its model: save the checkpoint again");
    std::error_code ec;
    if (!force && fs::symlink_status(path, ec).type() != fs::file_type::not_found)
        throw Error("'" + path + "' exists: add --force to replace it, or give another -o");
    std::map<std::string, const ParamInfo*> by_name;
    for (const ParamInfo& pi : lay.info) by_name[pi.name] = &pi;
    write_file_atomic(path, "the llm.c checkpoint", [&](FileSink& out) {
        int32_t h[256] = {};
        h[0] = k_llmc_magic;
        h[1] = 3;
        h[2] = T;
        h[3] = V;
        h[4] = L;
        h[5] = c.n_head;
        h[6] = C;
        h[7] = Vp;
        out.put(h, sizeof h);
        auto put = [&](const std::string& name) {
            const ParamInfo& pi = *by_name.at("transformer." + name);
            out.put(ck.state.params.data() + pi.offset, pi.count * sizeof(float));
        };
        put("wte.weight");
        std::vector<float> zeros(size_t(Vp - V) * size_t(C), 0.0f);
        out.put(zeros.data(), zeros.size() * sizeof(float));
        put("wpe.weight");
        for (const LlmcKind& k : k_llmc_layer_kinds)
            for (int l = 0; l < L; l++) put("h." + std::to_string(l) + "." + k.name);
        put("ln_f.weight");
        put("ln_f.bias");
    });
}

// --- after reading ---------------------------------------------------------------------------------------------------

// The state laid out for `to` (a smaller vocabulary or block): each tensor's first elements, which for wte (V, C) and
// wpe (T, C), row-major, are their first rows.
static void relayout(TrainerState& st, const ModelLayout& from, const ModelLayout& to) {
    for (std::vector<float>* flat : {&st.params, &st.adam_m, &st.adam_v}) {
        std::vector<float> out(to.flat, 0.0f);
        for (size_t i = 0; i < to.info.size(); i++)
            std::copy_n(flat->begin() + std::ptrdiff_t(from.info[i].offset), to.info[i].count,
                        out.begin() + std::ptrdiff_t(to.info[i].offset));
        *flat = std::move(out);
    }
}

void shrink_block(ImportedModel& m, int block_size) {
    Config& c = m.ck.config;
    if (block_size < 1 || block_size > c.block_size)
        throw Error("--block-size " + std::to_string(block_size) + " is out of range: the model has " +
                    std::to_string(c.block_size) + " positions (give 1 to " + std::to_string(c.block_size) + ")");
    if (block_size == c.block_size) return;
    Config to = c;
    to.block_size = block_size;
    relayout(m.ck.state, make_layout(c, m.model_vocab), make_layout(to, m.model_vocab));
    c = to;
}

void attach_tokenizer(ImportedModel& m, std::shared_ptr<const BpeTokenizer> tok, std::string* note) {
    const int Vt = tok->vocab_size(), Vm = m.model_vocab;
    if (Vt > Vm || Vm - Vt >= 128)
        throw Error("the tokenizer has " + std::to_string(Vt) + " tokens but the model's embedding " + std::to_string(Vm) +
                    " rows: give the tokenizer the model was trained with (--tokenizer)");
    Checkpoint& ck = m.ck;
    if (Vt < Vm) {  // padding rows, dropped: wte's first Vt rows stay
        relayout(ck.state, make_layout(ck.config, Vm), make_layout(ck.config, Vt));
        if (note)
            *note += std::string(note->empty() ? "" : "; ") + "the embedding's " + std::to_string(Vm - Vt) +
                     " padding rows past the tokenizer's " + std::to_string(Vt) + " tokens dropped";
        m.model_vocab = Vt;
    }
    ck.tokenizer = std::move(tok);
    ck.vocab.clear();
}

std::shared_ptr<const BpeTokenizer> tokenizer_for(const std::string& model_path, const std::string& given) {
    if (!given.empty()) {
        register_file("the tokenizer", given);
        return std::make_shared<const BpeTokenizer>(load_bpe_tokenizer(given));
    }
    std::error_code ec;
    fs::path dir = fs::is_directory(model_path, ec) ? fs::path(model_path) : fs::path(model_path).parent_path();
    if (dir.empty()) dir = ".";
    for (auto [a, b] : {std::pair{"vocab.json", "merges.txt"}, std::pair{"encoder.json", "vocab.bpe"}})
        if (fs::is_regular_file(dir / a, ec) && fs::is_regular_file(dir / b, ec)) {
            register_file("the tokenizer", (dir / a).string());
            register_file("the tokenizer's merges", (dir / b).string());
            return std::make_shared<const BpeTokenizer>(load_bpe_tokenizer((dir / a).string()));
        }
    if (fs::is_regular_file(dir / "gpt2_tokenizer.bin", ec)) {
        register_file("the tokenizer", (dir / "gpt2_tokenizer.bin").string());
        return std::make_shared<const BpeTokenizer>(load_bpe_tokenizer((dir / "gpt2_tokenizer.bin").string()));
    }
    throw Error("no tokenizer beside '" + model_path + "' (vocab.json + merges.txt, encoder.json + vocab.bpe or "
                "gpt2_tokenizer.bin): give --tokenizer, e.g. assets/gpt2 (scripts/setup.sh fetches GPT-2's files there)");
}

}  // namespace attn
