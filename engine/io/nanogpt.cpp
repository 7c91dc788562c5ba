// nanoGPT's ckpt.pt and meta.pkl, read into a Checkpoint and written from one (see nanogpt.h).
#include "io/nanogpt.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "error.h"
#include "io/files.h"
#include "io/gpt2.h"
#include "io/torch_pickle.h"
#include "model/model.h"
#include "rng.h"
#include "train/dataset.h"

namespace attn {

using torch_io::Value;
using torch_io::ValuePtr;
using Kind = Value::Kind;

bool is_torch_zip(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return false;  // never open a FIFO or device to look
    std::ifstream f(path, std::ios::binary);
    char magic[4] = {};
    return f.read(magic, 4) && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4;
}

// nanoGPT's optimizer order (configure_optimizers): the 2-D tensors in named_parameters order, then the rest.
static std::vector<int> optimizer_order(const ModelLayout& L) {
    std::vector<int> order;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < int(L.info.size()); i++)
            if ((L.info[i].shape.size() >= 2) == (pass == 0)) order.push_back(i);
    return order;
}

// The character vocabulary of meta.pkl: itos {int: one-character str}.
static std::vector<uint32_t> read_meta(const std::string& path, int V) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw Error("meta file '" + path + "' does not exist or is not a file");
    // prepare.py's meta.pkl is a few kB; anything past 64 MiB is not one (and is not read into memory)
    constexpr std::uintmax_t k_max_meta = std::uintmax_t(64) << 20;
    if (std::filesystem::file_size(path, ec) > k_max_meta || ec)
        throw Error("'" + path + "' is not nanoGPT's meta.pkl: it is larger than 64 MiB (prepare.py writes a few kB)");
    std::ifstream f(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (f.bad()) throw Error("cannot read '" + path + "': " + std::strerror(errno));
    ValuePtr root = torch_io::unpickle(bytes, "'" + path + "'");
    auto bad = [&](const std::string& why) { return Error("'" + path + "' is not nanoGPT's meta.pkl: " + why); };
    ValuePtr itos = root->kind == Kind::Dict ? root->get("itos") : nullptr;
    if (!itos || itos->kind != Kind::Dict) throw bad("it has no itos dict");
    if (int(itos->dict.size()) != V)
        throw Error("'" + path + "' has " + std::to_string(itos->dict.size()) + " characters but the checkpoint's model " +
                    std::to_string(V) + ": give the meta.pkl of the dataset it was trained on");
    std::vector<uint32_t> vocab(V, 0);
    std::vector<bool> seen(V, false);
    for (auto& [k, v] : itos->dict) {
        if (k->kind != Kind::Int || k->i < 0 || k->i >= V || seen[k->i]) throw bad("its itos keys are not 0 to vocab_size-1");
        std::vector<uint32_t> cps;
        if (v->kind != Kind::Str || !decode_utf8(v->s, cps, nullptr) || cps.size() != 1)
            throw bad("itos[" + std::to_string(k->i) + "] is not one character (only character-level vocabularies are "
                      "supported, not GPT-2's tokens)");
        vocab[k->i] = cps[0];
        seen[k->i] = true;
    }
    return vocab;
}

Checkpoint import_nanogpt(const std::string& path, const std::string& meta_path,
                          const std::vector<uint32_t>* corpus_vocab, std::string* note,
                          std::shared_ptr<const BpeTokenizer> tokenizer) {
    // the files read here are never written as anything else by this run (io/files.h), whatever -o, --save or
    // --metrics say
    register_file("the nanoGPT checkpoint", path);
    torch_io::TorchFile file(path);
    auto bad = [&](const std::string& why) { return Error("'" + path + "' is not a nanoGPT checkpoint: " + why); };
    const ValuePtr& root = file.root();
    if (root->kind != Kind::Dict) throw bad("it holds a " + std::string(root->kind_name()) + ", not a dict");
    ValuePtr model = root->get("model"), args = root->get("model_args");
    if (!model || model->kind != Kind::Dict) throw bad("it has no 'model' state dict");
    if (!args || args->kind != Kind::Dict) throw bad("it has no 'model_args' dict");
    auto number = [&](const ValuePtr& d, const char* key, bool required) -> const Value* {
        ValuePtr v = d ? d->get(key) : nullptr;
        if (v && (v->kind == Kind::Int || v->kind == Kind::Float || v->kind == Kind::Bool)) return v.get();
        if (required) throw bad(std::string("model_args lacks a number '") + key + "'");
        return nullptr;
    };
    auto as_double = [](const Value* v) { return v->kind == Kind::Float ? v->f : v->kind == Kind::Bool ? double(v->b) : double(v->i); };
    // a saved number as an int or float, clamped first (a conversion out of range is undefined; validate() then
    // refuses what is out of its own range), NaN as 0 for ints
    auto to_int = [](double x) { return std::isfinite(x) ? int(std::clamp(x, -1e9, 1e9)) : 0; };
    auto to_float = [](double x) { return std::isnan(x) ? float(x) : float(std::clamp(x, -1e30, 1e30)); };
    auto arg_int = [&](const char* key) {
        double x = as_double(number(args, key, true));
        if (x != std::floor(x) || x < 1 || x > 1e9) throw bad(std::string("model_args '") + key + "' is not a positive integer");
        return int(x);
    };

    Config c;
    c.apply_preset("nanogpt-char");
    c.n_layer = arg_int("n_layer");
    c.n_head = arg_int("n_head");
    c.n_embd = arg_int("n_embd");
    c.block_size = arg_int("block_size");
    const int V = arg_int("vocab_size");
    if (const Value* b = number(args, "bias", false)) c.bias = as_double(b) != 0;
    if (const Value* d = number(args, "dropout", false)) c.dropout = to_float(as_double(d));
    // training settings from train.py's config, where it saved them
    ValuePtr conf = root->get("config");
    if (conf && conf->kind == Kind::Dict) {
        auto set_f = [&](const char* key, float& f) { if (const Value* v = number(conf, key, false)) f = to_float(as_double(v)); };
        auto set_i = [&](const char* key, int& i) { if (const Value* v = number(conf, key, false)) i = to_int(as_double(v)); };
        set_f("learning_rate", c.lr);
        set_f("min_lr", c.min_lr);
        set_f("weight_decay", c.weight_decay);
        set_f("beta2", c.beta2);
        set_f("grad_clip", c.grad_clip);
        set_i("max_iters", c.max_iters);
        set_i("warmup_iters", c.warmup_iters);
        set_i("lr_decay_iters", c.lr_decay_iters);
        set_i("batch_size", c.batch_size);
        set_i("eval_interval", c.eval_interval);
        set_i("eval_iters", c.eval_iters);
        if (const Value* v = number(conf, "decay_lr", false); v && as_double(v) == 0) {
            c.warmup_iters = 0;  // train.py without decay_lr: a constant learning rate
            c.lr_decay_iters = 0;
        }
    }
    c.preset = (c.n_layer == 4 && c.n_embd == 128 && c.block_size == 64) ? "nanogpt-cpu" : "nanogpt-char";
    if (auto errs = validate(c); !errs.empty())
        throw Error("'" + path + "': its model cannot be opened here: " + errs.front().message);

    // the tensors by name, without torch.compile's prefix and the causal-mask buffers older PyTorch saved
    std::map<std::string, const torch_io::TensorRef*> tensors;
    for (auto& [k, v] : model->dict) {
        if (k->kind != Kind::Str || v->kind != Kind::Tensor) throw bad("its model state dict holds a non-tensor");
        std::string name = k->s;
        if (name.rfind("_orig_mod.", 0) == 0) name = name.substr(10);
        if (name.size() > 10 && (name.compare(name.size() - 10, 10, ".attn.bias") == 0)) continue;
        if (name.size() > 17 && (name.compare(name.size() - 17, 17, ".attn.masked_bias") == 0)) continue;
        tensors[name] = &v->tensor;
    }
    ModelLayout L = make_layout(c, V);
    auto shape_text = [](const std::vector<int64_t>& s) {
        std::string t = "(";
        for (size_t i = 0; i < s.size(); i++) t += (i ? ", " : "") + std::to_string(s[i]);
        return t + ")";
    };
    auto same_shape = [](const std::vector<int64_t>& a, const std::vector<int>& b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); i++)
            if (a[i] != b[i]) return false;
        return true;
    };
    // a tensor's values into its place in `flat`; refused when one is not finite (or, for AdamW's second moment,
    // negative): such a file would train into NaN, and a checkpoint saved from it could not be read back
    enum class Check { Finite, NonNegative };
    auto copy_into = [&](std::vector<float>& flat, const ParamInfo& pi, const torch_io::TensorRef& t,
                         const std::string& name, Check check = Check::Finite) {
        std::vector<double> x = file.values(t);
        for (size_t i = 0; i < pi.count; i++) {
            float f = float(x[i]);
            if (!std::isfinite(f) || (check == Check::NonNegative && f < 0))
                throw bad("tensor '" + name + "' holds " + (std::isnan(f) ? "NaN" : !std::isfinite(f) ? "an infinite value" : "a negative value") +
                          " at element " + std::to_string(i) + (check == Check::NonNegative ? " (AdamW's second moment)" : "") +
                          ": it cannot be trained on");
            flat[pi.offset + i] = f;
        }
    };
    // the bytes a tensor's elements take in the file; a view may not repeat elements of a smaller storage (a real
    // state dict never does), so the model's tensors together can need no more memory than the file has bytes
    auto file_bytes = [&](const torch_io::TensorRef& t, const std::string& name) {
        if (t.numel() > t.storage_numel)
            throw bad("tensor '" + name + "' has " + std::to_string(t.numel()) + " elements but its storage only " +
                      std::to_string(t.storage_numel));
        return uint64_t(t.numel()) * uint64_t(torch_io::dtype_size(t.dtype));
    };
    for (const ParamInfo& pi : L.info) {  // every tensor there, in its shape, before anything is allocated
        auto it = tensors.find(pi.name);
        if (it == tensors.end())
            throw bad("it lacks tensor '" + pi.name + "' (model_args says n_layer " + std::to_string(c.n_layer) +
                      ", bias " + (c.bias ? "True" : "False") + ")");
        std::vector<int64_t> want(pi.shape.begin(), pi.shape.end());
        if (!same_shape(it->second->shape, pi.shape))
            throw bad("tensor '" + pi.name + "' has shape " + shape_text(it->second->shape) + ", model_args make it " +
                      shape_text(want));
    }
    if (L.flat > (size_t(1) << 31))
        throw Error("'" + path + "' holds " + std::to_string(L.flat) + " parameters, more than Attention Lab opens");
    uint64_t claimed = 0;
    for (const ParamInfo& pi : L.info) claimed += file_bytes(*tensors.at(pi.name), pi.name);
    if (claimed > file.file_size())
        throw bad("its model_args make " + std::to_string(L.flat) + " parameters (" + std::to_string(claimed) +
                  " bytes), more than the file's " + std::to_string(file.file_size()) + " bytes hold");
    TrainerState st;
    st.params.assign(L.flat, 0.0f);
    st.adam_m.assign(L.flat, 0.0f);
    st.adam_v.assign(L.flat, 0.0f);
    for (const ParamInfo& pi : L.info) {
        auto it = tensors.find(pi.name);
        copy_into(st.params, pi, *it->second, pi.name);
        tensors.erase(it);
    }
    if (auto it = tensors.find("lm_head.weight"); it != tensors.end()) {  // saved too: the same tensor as wte
        const ParamInfo& wte = L.info[0];
        if (!same_shape(it->second->shape, wte.shape)) throw bad("lm_head.weight's shape differs from the token embedding's");
        std::vector<double> x = file.values(*it->second);
        for (size_t i = 0; i < wte.count; i++)
            if (float(x[i]) != st.params[wte.offset + i])
                throw bad("lm_head.weight differs from transformer.wte.weight, but nanoGPT's GPT ties them");
        tensors.erase(it);
    }
    if (!tensors.empty()) throw bad("tensor '" + tensors.begin()->first + "' is not part of nanoGPT's GPT");

    // a number saved as a Python number or a one-element tensor (AdamW's step, best_val_loss)
    auto scalar = [&](const ValuePtr& v) -> std::optional<double> {
        if (v->kind == Kind::Int) return double(v->i);
        if (v->kind == Kind::Float) return v->f;
        if (v->kind != Kind::Tensor || v->tensor.numel() != 1) return std::nullopt;
        return file.values(v->tensor)[0];
    };
    std::string said;
    auto say = [&](const std::string& s) { said += (said.empty() ? "" : "; ") + s; };
    int iter_num = 0;
    if (const Value* v = number(root, "iter_num", false)) iter_num = std::max(0, to_int(as_double(v)));
    st.step = iter_num;
    // AdamW's moments: the optimizer's parameter ids, group after group, in nanoGPT's order (or the state dict's)
    ValuePtr opt = root->get("optimizer");
    ValuePtr ostate = opt && opt->kind == Kind::Dict ? opt->get("state") : nullptr;
    ValuePtr groups = opt && opt->kind == Kind::Dict ? opt->get("param_groups") : nullptr;
    bool moments = false;
    if (ostate && ostate->kind == Kind::Dict && groups && groups->kind == Kind::List) {
        std::vector<int64_t> ids;
        for (auto& g : groups->items) {
            ValuePtr ps = g->kind == Kind::Dict ? g->get("params") : nullptr;
            if (!ps || ps->kind != Kind::List) { ids.clear(); break; }
            for (auto& p : ps->items) ids.push_back(p->kind == Kind::Int ? p->i : -1);
        }
        std::map<int64_t, ValuePtr> by_id;
        for (auto& [k, v] : ostate->dict)
            if (k->kind == Kind::Int && v->kind == Kind::Dict) by_id.emplace(k->i, v);
        auto entry = [&](int64_t id) -> ValuePtr {
            auto it = by_id.find(id);
            return it == by_id.end() ? nullptr : it->second;
        };
        std::vector<int> plain(L.info.size());
        for (size_t i = 0; i < plain.size(); i++) plain[i] = int(i);
        for (const std::vector<int>& order : {optimizer_order(L), plain}) {
            if (ids.size() != order.size()) break;
            bool fits = true;
            for (size_t j = 0; j < ids.size() && fits; j++) {
                ValuePtr e = entry(ids[j]);
                ValuePtr m = e ? e->get("exp_avg") : nullptr, v = e ? e->get("exp_avg_sq") : nullptr;
                fits = m && v && m->kind == Kind::Tensor && v->kind == Kind::Tensor &&
                       same_shape(m->tensor.shape, L.info[order[j]].shape) && same_shape(v->tensor.shape, L.info[order[j]].shape);
            }
            if (!fits) continue;
            uint64_t moment_bytes = 0;
            for (size_t j = 0; j < ids.size(); j++) {
                ValuePtr e = entry(ids[j]);
                moment_bytes += file_bytes(e->get("exp_avg")->tensor, "exp_avg of " + L.info[order[j]].name) +
                                file_bytes(e->get("exp_avg_sq")->tensor, "exp_avg_sq of " + L.info[order[j]].name);
            }
            if (moment_bytes > file.file_size()) throw bad("its AdamW moments claim more bytes than the file holds");
            for (size_t j = 0; j < ids.size(); j++) {
                ValuePtr e = entry(ids[j]);
                const std::string& name = L.info[order[j]].name;
                copy_into(st.adam_m, L.info[order[j]], e->get("exp_avg")->tensor, "optimizer exp_avg of " + name);
                copy_into(st.adam_v, L.info[order[j]], e->get("exp_avg_sq")->tensor, "optimizer exp_avg_sq of " + name,
                          Check::NonNegative);
                if (ValuePtr s = e->get("step"); j == 0 && s) {
                    if (auto step = scalar(s)) st.step = std::clamp(to_int(*step), 0, k_max_checkpoint_step);
                }
            }
            moments = true;
            break;
        }
    }
    if (!moments) say("no AdamW state that fits the model: its moments start at zero");

    Rng rng(c.seed), eval_rng(c.seed ^ 0x5eedULL);  // as a new Trainer seeds them
    for (int i = 0; i < 4; i++) {
        st.rng[i] = rng.state()[i];
        st.eval_rng[i] = eval_rng.state()[i];
    }
    Checkpoint ck;
    ck.config = c;
    ck.state = std::move(st);
    ck.corpus = "";  // nanoGPT's checkpoint names no text file (its config's `dataset` is a folder name)
    // the vocabulary
    std::string meta = meta_path;
    if (meta.empty() && !tokenizer) {
        std::filesystem::path beside = std::filesystem::path(path).parent_path() / "meta.pkl";
        std::error_code ec;
        if (std::filesystem::is_regular_file(beside, ec)) meta = beside.string();
    }
    if (tokenizer) {  // GPT-2's tokens (or another BPE): the model's rows past the tokenizer's are padding (50304)
        ImportedModel m{std::move(ck), V};
        std::string dropped;
        attach_tokenizer(m, std::move(tokenizer), &dropped);
        ck = std::move(m.ck);
        say(std::to_string(ck.tokenizer->vocab_size()) + " byte-level BPE tokens from the tokenizer given" +
            (dropped.empty() ? "" : ", " + dropped));
    } else if (!meta.empty()) {
        register_file("the nanoGPT vocabulary (meta.pkl)", meta);
        ck.vocab = read_meta(meta, V);
        say("characters from " + meta);
    } else if (corpus_vocab && int(corpus_vocab->size()) == V) {
        ck.vocab = *corpus_vocab;
        say("no meta.pkl beside it: the corpus's " + std::to_string(V) + " characters, sorted, as nanoGPT's prepare.py makes them");
    } else if (V >= 50257) {
        throw Error("'" + path + "' has no meta.pkl beside it and a vocabulary of " + std::to_string(V) +
                    ": GPT-2's tokens; open it with attnlab import nanogpt " + path + " --tokenizer assets/gpt2 -o "
                    "RUN.safetensors (GPT-2's files, which scripts/setup.sh fetches)");
    } else {
        throw Error("'" + path + "' has no meta.pkl beside it, so its " + std::to_string(V) +
                    " token ids cannot be shown as characters: give --meta DATA/meta.pkl (nanoGPT's prepare.py writes it"
                    " into data/shakespeare_char/)" +
                    (corpus_vocab ? ", or train on a corpus with exactly " + std::to_string(V) + " characters" : ""));
    }
    ValuePtr best = root->get("best_val_loss");
    if (auto v = best ? scalar(best) : std::nullopt) {
        if (std::isfinite(*v) && *v >= 0 && *v < 1e8) {  // train.py starts from 1e9: no evaluation yet
            ck.history.best_val_before = *v;
            char buf[64];
            std::snprintf(buf, sizeof buf, "its best val loss %.4f", *v);
            say(buf);
        }
    }
    if (note) *note = said;
    return ck;
}

void export_nanogpt(const Checkpoint& ck, const std::string& dir, const ExportOptions& opt) {
    const Config& c = ck.config;
    if (c.kind != ModelKind::Transformer || !c.nanogpt)
        throw Error("only nanoGPT's GPT can be exported to nanoGPT (a run of --preset nanogpt-char or nanogpt-cpu, or an "
                    "imported nanoGPT checkpoint); this run is the lecture's " + c.describe() +
                    ", whose layers nanoGPT's model.py does not have");
    if (c.gelu_tanh)
        throw Error("nanoGPT's model.py runs the exact GELU and this run GELU's tanh form (--activation gelu-tanh): "
                    "its weights would compute something else there; export a run made with --activation gelu");
    const int V = checkpoint_vocab_size(ck);
    ModelLayout L = make_layout(c, V);
    if (ck.state.params.size() != L.flat || ck.state.adam_m.size() != L.flat || ck.state.adam_v.size() != L.flat)
        throw Error("the run's saved state does not fit its model: save the checkpoint again");
    torch_io::TorchWriter w;
    auto slice = [&](const std::vector<float>& flat, const ParamInfo& pi) {
        std::vector<int64_t> shape(pi.shape.begin(), pi.shape.end());
        return w.tensor(std::vector<float>(flat.begin() + pi.offset, flat.begin() + pi.offset + pi.count), shape);
    };
    auto int_dict = [] {
        auto d = std::make_shared<Value>();
        d->kind = Kind::Dict;
        return d;
    };
    // model: nanoGPT's state_dict, lm_head.weight the very tensor of wte (one storage, as torch.save writes tied weights)
    std::vector<std::pair<std::string, ValuePtr>> model;
    for (const ParamInfo& pi : L.info) model.emplace_back(pi.name, slice(ck.state.params, pi));
    model.emplace_back("lm_head.weight", model[0].second);
    if (opt.mask_buffers) {  // model.py without flash attention (PyTorch < 2.0): each block's causal mask, a buffer
        const int T = c.block_size;
        std::vector<float> tril(size_t(T) * size_t(T), 0.0f);
        for (int i = 0; i < T; i++)
            for (int j = 0; j <= i; j++) tril[size_t(i) * size_t(T) + size_t(j)] = 1.0f;
        ValuePtr mask = w.tensor(tril, {1, 1, T, T});  // one storage, as every block's holds the same values
        for (int l = 0; l < c.n_layer; l++) model.emplace_back("transformer.h." + std::to_string(l) + ".attn.bias", mask);
    }
    // optimizer: AdamW's state_dict, ids in configure_optimizers' order (decayed 2-D tensors, then the rest)
    std::vector<int> order = optimizer_order(L);
    size_t n_decay = 0;
    for (int i : order) n_decay += L.info[i].shape.size() >= 2;
    ValuePtr state = int_dict();
    for (size_t j = 0; j < order.size(); j++) {
        const ParamInfo& pi = L.info[order[j]];
        state->dict.emplace_back(torch_io::integer(int64_t(j)),
                                 torch_io::dict({{"step", w.tensor({float(ck.state.step)}, {})},
                                                 {"exp_avg", slice(ck.state.adam_m, pi)},
                                                 {"exp_avg_sq", slice(ck.state.adam_v, pi)}}));
    }
    auto group = [&](double wd, size_t from, size_t to) {
        std::vector<ValuePtr> ids;
        for (size_t j = from; j < to; j++) ids.push_back(torch_io::integer(int64_t(j)));
        return torch_io::dict({{"lr", torch_io::real(c.lr_at(ck.state.step))},
                               {"betas", torch_io::tuple({torch_io::real(0.9), torch_io::real(c.beta2)})},
                               {"eps", torch_io::real(1e-8)}, {"weight_decay", torch_io::real(wd)},
                               {"amsgrad", torch_io::boolean(false)}, {"foreach", torch_io::none()},
                               {"maximize", torch_io::boolean(false)}, {"capturable", torch_io::boolean(false)},
                               {"differentiable", torch_io::boolean(false)}, {"fused", torch_io::none()},
                               {"params", torch_io::list(std::move(ids))}});
    };
    ValuePtr optimizer = torch_io::dict(
        {{"state", state}, {"param_groups", torch_io::list({group(c.weight_decay, 0, n_decay), group(0.0, n_decay, order.size())})}});
    double best = ck.history.best_val_before.value_or(1e9);  // train.py's start: no evaluation yet
    for (const auto& e : ck.history.evals) best = std::min(best, e.val);
    using torch_io::boolean, torch_io::integer, torch_io::real, torch_io::str;
    ValuePtr model_args = torch_io::dict({{"n_layer", integer(c.n_layer)}, {"n_head", integer(c.n_head)},
                                          {"n_embd", integer(c.n_embd)}, {"block_size", integer(c.block_size)},
                                          {"bias", boolean(c.bias)}, {"vocab_size", integer(V)},
                                          {"dropout", real(c.dropout)}});
    ValuePtr config = torch_io::dict(
        {{"out_dir", str(dir)}, {"eval_interval", integer(c.eval_interval)}, {"eval_iters", integer(c.eval_iters)},
         {"init_from", str("resume")}, {"dataset", str(ck.tokenizer ? "shakespeare" : "shakespeare_char")}, {"gradient_accumulation_steps", integer(1)},
         {"batch_size", integer(c.batch_size)}, {"block_size", integer(c.block_size)}, {"n_layer", integer(c.n_layer)},
         {"n_head", integer(c.n_head)}, {"n_embd", integer(c.n_embd)}, {"dropout", real(c.dropout)},
         {"bias", boolean(c.bias)}, {"learning_rate", real(c.lr)}, {"max_iters", integer(c.max_iters)},
         {"weight_decay", real(c.weight_decay)}, {"beta1", real(0.9)}, {"beta2", real(c.beta2)},
         {"grad_clip", real(c.grad_clip)}, {"decay_lr", boolean(c.lr_decay_iters > 0)},
         {"warmup_iters", integer(c.warmup_iters)}, {"lr_decay_iters", integer(c.lr_decay_iters)},
         {"min_lr", real(c.min_lr)}});
    ValuePtr root = torch_io::dict({{"model", torch_io::dict(std::move(model))}, {"optimizer", optimizer},
                                    {"model_args", model_args}, {"iter_num", integer(ck.state.step)},
                                    {"best_val_loss", w.tensor({float(best)}, {})}, {"config", config}});
    // meta.pkl: prepare.py's vocabulary dict
    ValuePtr itos = int_dict(), stoi = int_dict();
    for (int i = 0; i < int(ck.vocab.size()); i++) {
        itos->dict.emplace_back(integer(i), str(encode_utf8(ck.vocab[i])));
        stoi->dict.emplace_back(str(encode_utf8(ck.vocab[i])), integer(i));
    }
    ValuePtr meta = torch_io::dict({{"vocab_size", integer(V)}, {"itos", itos}, {"stoi", stoi}});
    namespace fs = std::filesystem;
    const std::string ckpt = (fs::path(dir) / "ckpt.pt").string(), meta_path = (fs::path(dir) / "meta.pkl").string();
    std::error_code ec;
    // a run of BPE tokens has no meta.pkl: nanoGPT then reads GPT-2's tokens (sample.py encodes with tiktoken's gpt2)
    std::vector<std::string> files = {ckpt};
    if (!ck.tokenizer) files.push_back(meta_path);
    for (const std::string& f : files)
        if (!opt.force && fs::symlink_status(f, ec).type() != fs::file_type::not_found)
            throw Error("'" + f + "' exists: add --force to replace it, or give another -o folder");
    fs::create_directories(dir, ec);
    if (ec) throw Error("cannot create folder '" + dir + "': " + ec.message() + " (choose another -o)");
    // both files written beside, then renamed into place: never one new file beside an old one
    std::string pt = w.bytes(root, "ckpt");
    if (ck.tokenizer) write_file_atomic(ckpt, "the exported checkpoint", pt);
    else write_files_atomic({{ckpt, "the exported checkpoint", std::move(pt)},
                             {meta_path, "the exported vocabulary", torch_io::pickle(meta)}});
}

}  // namespace attn
