// The pickle subset of torch.save and pickle.dump: the unpickler, which executes nothing (torch_pickle.h; the
// pickler that writes them is pickler.cpp).
#include "io/torch_pickle.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "vk/check.h"

namespace attn::torch_io {

namespace {

constexpr size_t k_max_stack = 1 << 20;    // values on the stack, marks, memo entries
constexpr int64_t k_max_numel = int64_t(1) << 40;

// Internal kinds beside the public ones: a storage (BINPERSID) and a mark-free "frozen" flag live in Node.
struct Node : Value {
    bool frozen = false;  // inside a container already: never changed again (so no value can contain itself)
    int depth = 0;        // containers below it
    bool is_storage = false;    // a BINPERSID storage: only ever an argument of _rebuild_tensor_v2
    bool holds_storage = false; // a tuple with a storage in it (the arguments of _rebuild_tensor_v2)
    // Dict: where each str key is in `dict` (no quadratic scan); made for the first key
    std::unique_ptr<std::unordered_map<std::string, size_t>> str_keys;
};

std::shared_ptr<Node> make(Value::Kind k) {
    auto n = std::make_shared<Node>();
    n->kind = k;
    return n;
}

struct Parser {
    const std::string& in;
    const std::string& what;
    bool allow_tensors;
    size_t pos = 0;
    std::vector<std::shared_ptr<Node>> stack;
    std::vector<size_t> marks;
    std::map<uint64_t, std::shared_ptr<Node>> memo;
    // Values made so far, at most one per four bytes of input (real pickles spend five or more a value): memory stays
    // a bounded multiple of the file's size. None, True, False and () are shared, as they cost one byte each.
    size_t made = 0;
    const size_t max_made = in.size() / 4 + 4096;
    std::shared_ptr<Node> none_, true_, false_, empty_tuple_;

    std::shared_ptr<Node> node(Value::Kind k) {
        if (++made > max_made) fail("more values than a file of its size holds");
        return make(k);
    }
    std::shared_ptr<Node> shared(std::shared_ptr<Node>& slot, Value::Kind k, bool b = false) {
        if (!slot) {
            slot = node(k);
            slot->b = b;
        }
        return slot;
    }

    [[noreturn]] void fail(const std::string& why) const {
        throw Error(what + ": not a checkpoint Attention Lab can read (" + why + " at byte " + std::to_string(pos) + ")");
    }
    const char* take(size_t n) {
        if (n > in.size() - pos) fail("the pickle ends early");
        const char* p = in.data() + pos;
        pos += n;
        return p;
    }
    uint64_t le(size_t n) {
        const unsigned char* p = reinterpret_cast<const unsigned char*>(take(n));
        uint64_t v = 0;
        for (size_t k = 0; k < n; k++) v |= uint64_t(p[k]) << (8 * k);
        return v;
    }
    std::string line() {
        size_t end = in.find('\n', pos);
        if (end == std::string::npos || end - pos > 256) fail("a malformed GLOBAL");
        std::string s = in.substr(pos, end - pos);
        pos = end + 1;
        return s;
    }
    void push(std::shared_ptr<Node> v) {
        if (stack.size() >= k_max_stack) fail("too many values");
        stack.push_back(std::move(v));
    }
    std::shared_ptr<Node> pop() {
        if (stack.empty() || (!marks.empty() && stack.size() <= marks.back())) fail("a value missing from the stack");
        auto v = std::move(stack.back());
        stack.pop_back();
        return v;
    }
    std::shared_ptr<Node>& top() {
        if (stack.empty() || (!marks.empty() && stack.size() <= marks.back())) fail("a value missing from the stack");
        return stack.back();
    }
    std::vector<std::shared_ptr<Node>> pop_mark() {
        if (marks.empty()) fail("a MARK missing");
        size_t m = marks.back();
        marks.pop_back();
        std::vector<std::shared_ptr<Node>> out(stack.begin() + long(m), stack.end());
        stack.resize(m);
        return out;
    }
    // child goes into parent: frozen from now on, its depth counted
    void adopt(Node& parent, const std::shared_ptr<Node>& child, bool allow_storage = false) {
        if (parent.frozen) fail("a container changed after it was placed in another");
        if (child.get() == &parent) fail("a container placed inside itself");
        if ((child->is_storage || child->holds_storage) && !allow_storage) fail("a storage outside a tensor");
        child->frozen = true;
        parent.depth = std::max(parent.depth, child->depth + 1);
        if (parent.depth > k_max_pickle_depth) fail("containers nested too deep");
    }
    std::shared_ptr<Node> tuple_of(std::vector<std::shared_ptr<Node>> items) {
        auto t = node(Value::Kind::Tuple);
        for (auto& v : items) {
            adopt(*t, v, true);
            t->holds_storage |= v->is_storage || v->holds_storage;
            t->items.push_back(v);
        }
        return t;
    }
    void set_item(Node& d, const std::shared_ptr<Node>& k, const std::shared_ptr<Node>& v) {
        if (d.kind != Value::Kind::Dict) fail("SETITEM on a " + std::string(d.kind_name()));
        adopt(d, k);
        adopt(d, v);
        if (k->kind == Value::Kind::Str) {  // a key given twice: the last wins, in the first one's place (as in Python)
            if (!d.str_keys) d.str_keys = std::make_unique<std::unordered_map<std::string, size_t>>();
            auto [it, fresh] = d.str_keys->emplace(k->s, d.dict.size());
            if (!fresh) {
                d.dict[it->second].second = v;
                return;
            }
        }
        d.dict.emplace_back(k, v);
    }
    void append(Node& l, const std::shared_ptr<Node>& v) {
        if (l.kind != Value::Kind::List) fail("APPEND on a " + std::string(l.kind_name()));
        adopt(l, v);
        l.items.push_back(v);
    }
    std::shared_ptr<Node> global(const std::string& module, const std::string& name) {
        bool ok = module == "collections" && name == "OrderedDict";
        if (allow_tensors) {
            ok |= module == "torch._utils" && (name == "_rebuild_tensor_v2" || name == "_rebuild_parameter");
            ok |= module == "torch" && !storage_dtype(module + " " + name).empty();
        }
        if (!ok) fail("it names the Python object " + module + "." + name + ", which is refused; nothing was run");
        auto g = node(Value::Kind::Global);
        g->s = module + " " + name;
        return g;
    }
    // The element type of a torch storage global ("torch FloatStorage" -> "float32"), "" for any other.
    static std::string storage_dtype(const std::string& global) {
        static const char* const storages[][2] = {
            {"torch FloatStorage", "float32"}, {"torch DoubleStorage", "float64"}, {"torch HalfStorage", "float16"},
            {"torch BFloat16Storage", "bfloat16"}, {"torch LongStorage", "int64"}, {"torch IntStorage", "int32"},
            {"torch ByteStorage", "uint8"}, {"torch BoolStorage", "bool"}};
        for (auto& s : storages)
            if (global == s[0]) return s[1];
        return "";
    }
    std::vector<int64_t> ints(const std::shared_ptr<Node>& t, const char* what_) {
        if (t->kind != Value::Kind::Tuple) fail(std::string("a tensor's ") + what_ + " that is not a tuple");
        std::vector<int64_t> out;
        for (auto& v : t->items) {
            if (v->kind != Value::Kind::Int || v->i < 0) fail(std::string("a tensor's ") + what_ + " that is not sizes");
            out.push_back(v->i);
        }
        return out;
    }
    std::shared_ptr<Node> reduce(const std::shared_ptr<Node>& fn, const std::shared_ptr<Node>& args) {
        if (fn->kind != Value::Kind::Global) fail("REDUCE of a " + std::string(fn->kind_name()));
        if (args->kind != Value::Kind::Tuple) fail("REDUCE without an argument tuple");
        const auto& a = args->items;
        if (fn->s == "collections OrderedDict") {
            auto d = node(Value::Kind::Dict);
            if (a.empty()) return d;
            if (a.size() != 1 || a[0]->kind != Value::Kind::List) fail("an OrderedDict made from something other than pairs");
            for (auto& kv : a[0]->items) {
                if (kv->kind != Value::Kind::Tuple || kv->items.size() != 2) fail("an OrderedDict item that is not a pair");
                set_item(*d, std::static_pointer_cast<Node>(kv->items[0]), std::static_pointer_cast<Node>(kv->items[1]));
            }
            return d;
        }
        if (fn->s == "torch._utils _rebuild_parameter") {
            if (a.size() < 2 || a[0]->kind != Value::Kind::Tensor) fail("a parameter without its tensor");
            return std::static_pointer_cast<Node>(a[0]);
        }
        if (fn->s == "torch._utils _rebuild_tensor_v2") {
            // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
            if (a.size() < 6 || a.size() > 7) fail("a tensor with " + std::to_string(a.size()) + " arguments");
            auto st = std::static_pointer_cast<Node>(a[0]);
            if (!st->is_storage) fail("a tensor without a storage");
            if (a[1]->kind != Value::Kind::Int || a[1]->i < 0) fail("a tensor with a bad storage offset");
            auto t = node(Value::Kind::Tensor);
            t->tensor = st->tensor;
            t->tensor.offset = a[1]->i;
            t->tensor.shape = ints(std::static_pointer_cast<Node>(a[2]), "size");
            t->tensor.stride = ints(std::static_pointer_cast<Node>(a[3]), "stride");
            if (t->tensor.shape.size() != t->tensor.stride.size() || t->tensor.shape.size() > 8)
                fail("a tensor whose size and stride disagree");
            // n: the element count; extent: the last element's distance from the first. Both bounded by 2^40 here
            // (products checked before they are made), so the sums below cannot overflow.
            int64_t n = 1, extent = 0;
            for (size_t d = 0; d < t->tensor.shape.size(); d++) {
                int64_t s = t->tensor.shape[d], st = t->tensor.stride[d];
                if (s > k_max_numel || (s > 0 && n > k_max_numel / s)) fail("a tensor too large");
                n *= s;
                if (s > 0 && st > k_max_numel) fail("a tensor stride too large");
                if (s > 1 && st > 0 && (s - 1 > k_max_numel / st || extent > k_max_numel - (s - 1) * st))
                    fail("a tensor reaching past its storage");
                if (s > 0) extent += (s - 1) * st;
            }
            if (n > 0 && (t->tensor.offset > k_max_numel || t->tensor.offset + extent >= t->tensor.storage_numel))
                fail("a tensor reaching past its storage");
            return t;
        }
        fail("REDUCE of " + fn->s);
    }
    std::shared_ptr<Node> persistent(const std::shared_ptr<Node>& pid) {
        // ('storage', storage_type, key, location, numel)
        if (!allow_tensors) fail("a persistent id outside a torch.save file");
        if (pid->kind != Value::Kind::Tuple || pid->items.size() != 5 || pid->items[0]->kind != Value::Kind::Str ||
            pid->items[0]->s != "storage" || pid->items[1]->kind != Value::Kind::Global ||
            pid->items[2]->kind != Value::Kind::Str || pid->items[4]->kind != Value::Kind::Int || pid->items[4]->i < 0 ||
            pid->items[4]->i > k_max_numel)
            fail("a persistent id that is not a storage");
        std::string dtype = storage_dtype(pid->items[1]->s);
        if (dtype.empty()) fail("a storage of type " + pid->items[1]->s);
        const std::string& key = pid->items[2]->s;
        if (key.empty() || key.size() > 64 || key.find('/') != std::string::npos || key.find("..") != std::string::npos)
            fail("a storage key that is not a plain name");
        auto st = node(Value::Kind::Tensor);
        st->is_storage = true;
        st->tensor.storage = key;
        st->tensor.dtype = dtype;
        st->tensor.storage_numel = pid->items[4]->i;
        return st;
    }
    std::shared_ptr<Node> str(Value::Kind k, size_t n) {
        if (n > in.size()) fail("a string longer than the file");
        auto v = node(k);
        v->s.assign(take(n), n);
        return v;
    }
    std::shared_ptr<Node> integer(int64_t i) {
        auto v = node(Value::Kind::Int);
        v->i = i;
        return v;
    }
    void memo_put(uint64_t idx) {
        if (memo.size() >= k_max_stack && !memo.count(idx)) fail("too many memo entries");
        memo[idx] = top();
    }

    ValuePtr run() {
        for (;;) {
            unsigned char op = static_cast<unsigned char>(*take(1));
            switch (op) {
            case 0x80: {  // PROTO
                unsigned v = unsigned(le(1));
                if (v < 2 || v > 5) fail("pickle protocol " + std::to_string(v));
                break;
            }
            case 0x95: le(8); break;  // FRAME: a length hint
            case '.': {               // STOP
                auto v = pop();
                if (!stack.empty() || !marks.empty()) fail("values left over at the end");
                if (v->is_storage || v->holds_storage) fail("a storage outside a tensor");
                return v;
            }
            case '(': marks.push_back(stack.size()); if (marks.size() > k_max_stack) fail("too many marks"); break;
            case '0': pop(); break;
            case '1': pop_mark(); break;
            case '2': push(top()); break;
            case 'N': push(shared(none_, Value::Kind::None)); break;
            case 0x88: push(shared(true_, Value::Kind::Bool, true)); break;
            case 0x89: push(shared(false_, Value::Kind::Bool, false)); break;
            case 'J': push(integer(int32_t(uint32_t(le(4))))); break;
            case 'K': push(integer(int64_t(le(1)))); break;
            case 'M': push(integer(int64_t(le(2)))); break;
            case 0x8a: case 0x8b: {  // LONG1, LONG4: little-endian two's complement
                uint64_t n = op == 0x8a ? le(1) : le(4);
                if (n > 8) fail("an integer beyond 64 bits");
                uint64_t v = n ? le(size_t(n)) : 0;
                if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t(0) << (8 * n);  // sign-extend
                push(integer(int64_t(v)));
                break;
            }
            case 'G': {  // BINFLOAT: big-endian double
                const unsigned char* p = reinterpret_cast<const unsigned char*>(take(8));
                uint64_t bits = 0;
                for (int k = 0; k < 8; k++) bits = (bits << 8) | p[k];
                auto v = node(Value::Kind::Float);
                std::memcpy(&v->f, &bits, 8);
                push(v);
                break;
            }
            case 'X': push(str(Value::Kind::Str, size_t(le(4)))); break;
            case 0x8c: push(str(Value::Kind::Str, size_t(le(1)))); break;
            case 0x8d: push(str(Value::Kind::Str, size_t(le(8)))); break;
            case 'T': push(str(Value::Kind::Str, size_t(le(4)))); break;  // BINSTRING (Python 2 str)
            case 'U': push(str(Value::Kind::Str, size_t(le(1)))); break;
            case 'B': push(str(Value::Kind::Bytes, size_t(le(4)))); break;
            case 'C': push(str(Value::Kind::Bytes, size_t(le(1)))); break;
            case 0x8e: push(str(Value::Kind::Bytes, size_t(le(8)))); break;
            case ')': push(shared(empty_tuple_, Value::Kind::Tuple)); break;
            case 't': push(tuple_of(pop_mark())); break;
            case 0x85: case 0x86: case 0x87: {
                size_t n = op - 0x84;
                std::vector<std::shared_ptr<Node>> items(n);
                for (size_t k = n; k-- > 0;) items[k] = pop();
                push(tuple_of(std::move(items)));
                break;
            }
            case ']': push(node(Value::Kind::List)); break;
            case 'l': {
                auto items = pop_mark();
                auto l = node(Value::Kind::List);
                for (auto& v : items) append(*l, v);
                push(l);
                break;
            }
            case 'a': {
                auto v = pop();
                append(*top(), v);
                break;
            }
            case 'e': {
                auto items = pop_mark();
                auto& l = top();
                for (auto& v : items) append(*l, v);
                break;
            }
            case '}': push(node(Value::Kind::Dict)); break;
            case 'd': {
                auto items = pop_mark();
                if (items.size() % 2) fail("a dict with a key and no value");
                auto d = node(Value::Kind::Dict);
                for (size_t k = 0; k < items.size(); k += 2) set_item(*d, items[k], items[k + 1]);
                push(d);
                break;
            }
            case 's': {
                auto v = pop();
                auto k = pop();
                set_item(*top(), k, v);
                break;
            }
            case 'u': {
                auto items = pop_mark();
                if (items.size() % 2) fail("a dict with a key and no value");
                auto& d = top();
                for (size_t k = 0; k < items.size(); k += 2) set_item(*d, items[k], items[k + 1]);
                break;
            }
            case 'q': memo_put(le(1)); break;
            case 'r': memo_put(le(4)); break;
            case 0x94: memo_put(memo.size()); break;  // MEMOIZE: the next index
            case 'h': case 'j': {
                uint64_t idx = op == 'h' ? le(1) : le(4);
                auto it = memo.find(idx);
                if (it == memo.end()) fail("a memo entry used before it was stored");
                push(it->second);
                break;
            }
            case 'c': {
                std::string module = line();
                std::string name = line();
                push(global(module, name));
                break;
            }
            case 0x93: {  // STACK_GLOBAL
                auto name = pop();
                auto module = pop();
                if (name->kind != Value::Kind::Str || module->kind != Value::Kind::Str) fail("a malformed STACK_GLOBAL");
                push(global(module->s, name->s));
                break;
            }
            case 'R': {
                auto args = pop();
                auto fn = pop();
                push(reduce(fn, args));
                break;
            }
            case 'b': {  // BUILD: the empty states torch.save writes, and a state_dict's _metadata attribute
                auto state = pop();
                bool empty = state->kind == Value::Kind::None ||
                             ((state->kind == Value::Kind::Dict) && state->dict.empty()) ||
                             (state->kind == Value::Kind::Tuple && state->items.empty());
                // Module.state_dict() is an OrderedDict with attribute _metadata (per-module versions): data only,
                // dropped here (nothing reads it)
                bool metadata = state->kind == Value::Kind::Dict && top()->kind == Value::Kind::Dict &&
                                std::all_of(state->dict.begin(), state->dict.end(), [](const auto& kv) {
                                    return kv.first->kind == Value::Kind::Str && kv.first->s == "_metadata";
                                });
                if (!empty && !metadata) fail("an object with a state to set");
                top();
                break;
            }
            case 'Q': {
                auto pid = pop();
                push(persistent(pid));
                break;
            }
            default: {
                char hex[8];
                std::snprintf(hex, sizeof hex, "0x%02x", op);
                fail(std::string("pickle opcode ") + hex + ", which a checkpoint does not need");
            }
            }
        }
    }
};

}  // namespace

int64_t TensorRef::numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
}

ValuePtr Value::get(const std::string& key) const {
    if (kind != Kind::Dict) return nullptr;
    for (const auto& [k, v] : dict)
        if (k->kind == Kind::Str && k->s == key) return v;
    return nullptr;
}

const char* Value::kind_name() const {
    switch (kind) {
    case Kind::None: return "None";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::Str: return "str";
    case Kind::Bytes: return "bytes";
    case Kind::Tuple: return "tuple";
    case Kind::List: return "list";
    case Kind::Dict: return "dict";
    case Kind::Tensor: return "tensor";
    case Kind::Global: return "global";
    }
    return "?";
}

ValuePtr unpickle(const std::string& bytes, const std::string& what, bool allow_tensors) {
    Parser p{bytes, what, allow_tensors};
    return p.run();
}

int dtype_size(const std::string& d) {
    if (d == "float32" || d == "int32") return 4;
    if (d == "float64" || d == "int64") return 8;
    if (d == "float16" || d == "bfloat16") return 2;
    if (d == "uint8" || d == "bool") return 1;
    return 0;
}

}  // namespace attn::torch_io
