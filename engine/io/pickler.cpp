// Writing pickles: the value builders and the protocol-2 pickler that torch.load and pickle.load read back
// (torch_pickle.h). The unpickler is pickle.cpp.
#include <cstring>
#include <memory>

#include "io/torch_pickle.h"
#include "vk/check.h"

namespace attn::torch_io {

namespace {
std::shared_ptr<Value> make_value(Value::Kind k) {
    auto v = std::make_shared<Value>();
    v->kind = k;
    return v;
}
}  // namespace

ValuePtr none() { return make_value(Value::Kind::None); }
ValuePtr boolean(bool b) {
    auto v = make_value(Value::Kind::Bool);
    v->b = b;
    return v;
}
ValuePtr integer(int64_t i) {
    auto v = make_value(Value::Kind::Int);
    v->i = i;
    return v;
}
ValuePtr real(double f) {
    auto v = make_value(Value::Kind::Float);
    v->f = f;
    return v;
}
ValuePtr str(const std::string& s) {
    auto v = make_value(Value::Kind::Str);
    v->s = s;
    return v;
}
ValuePtr tuple(std::vector<ValuePtr> items) {
    auto v = make_value(Value::Kind::Tuple);
    v->items = std::move(items);
    return v;
}
ValuePtr list(std::vector<ValuePtr> items) {
    auto v = make_value(Value::Kind::List);
    v->items = std::move(items);
    return v;
}
ValuePtr dict(std::vector<std::pair<std::string, ValuePtr>> items) {
    auto v = make_value(Value::Kind::Dict);
    for (auto& [k, x] : items) v->dict.emplace_back(str(k), std::move(x));
    return v;
}

namespace {
struct Pickler {
    std::string out;
    void u8(unsigned v) { out.push_back(char(v)); }
    void le(uint64_t v, int n) {
        for (int k = 0; k < n; k++) out.push_back(char((v >> (8 * k)) & 255));
    }
    void text(const std::string& s) {
        u8('X');
        le(s.size(), 4);
        out += s;
    }
    void global(const char* module, const char* name) {
        u8('c');
        out += module;
        out += '\n';
        out += name;
        out += '\n';
    }
    void write(const Value& v, int depth) {
        if (depth > k_max_pickle_depth) throw Error("pickle: values nested too deep to write");
        switch (v.kind) {
        case Value::Kind::None: u8('N'); break;
        case Value::Kind::Bool: u8(v.b ? 0x88 : 0x89); break;
        case Value::Kind::Int:
            if (v.i >= 0 && v.i < 256) u8('K'), le(uint64_t(v.i), 1);
            else if (v.i >= 0 && v.i < 65536) u8('M'), le(uint64_t(v.i), 2);
            else if (v.i >= INT32_MIN && v.i <= INT32_MAX) u8('J'), le(uint64_t(uint32_t(int32_t(v.i))), 4);
            else u8(0x8a), u8(8), le(uint64_t(v.i), 8);
            break;
        case Value::Kind::Float: {
            uint64_t bits;
            std::memcpy(&bits, &v.f, 8);
            u8('G');
            for (int k = 7; k >= 0; k--) u8(unsigned((bits >> (8 * k)) & 255));
            break;
        }
        case Value::Kind::Str: text(v.s); break;
        case Value::Kind::Tuple:
            u8('(');
            for (auto& x : v.items) write(*x, depth + 1);
            u8('t');
            break;
        case Value::Kind::List:
            u8(']');
            if (!v.items.empty()) {
                u8('(');
                for (auto& x : v.items) write(*x, depth + 1);
                u8('e');
            }
            break;
        case Value::Kind::Dict:
            u8('}');
            if (!v.dict.empty()) {
                u8('(');
                for (auto& [k, x] : v.dict) write(*k, depth + 1), write(*x, depth + 1);
                u8('u');
            }
            break;
        case Value::Kind::Tensor: {
            const TensorRef& t = v.tensor;
            if (t.dtype != "float32") throw Error("pickle: only float32 tensors are written");
            global("torch._utils", "_rebuild_tensor_v2");
            u8('(');
            u8('(');  // the persistent id
            text("storage");
            global("torch", "FloatStorage");
            text(t.storage);
            text("cpu");
            write(*integer(t.storage_numel), depth + 1);
            u8('t');
            u8('Q');
            write(*integer(t.offset), depth + 1);
            std::vector<ValuePtr> size, stride;
            for (int64_t d : t.shape) size.push_back(integer(d));
            for (int64_t d : t.stride) stride.push_back(integer(d));
            write(*tuple(size), depth + 1);
            write(*tuple(stride), depth + 1);
            u8(0x89);  // requires_grad False
            global("collections", "OrderedDict");
            u8(')');
            u8('R');  // backward hooks: OrderedDict()
            u8('t');
            u8('R');
            break;
        }
        case Value::Kind::Bytes:
        case Value::Kind::Global: throw Error(std::string("pickle: a ") + v.kind_name() + " is not written");
        }
    }
};
}  // namespace

std::string pickle(const ValuePtr& v) {
    Pickler p;
    p.u8(0x80);
    p.u8(2);
    p.write(*v, 0);
    p.u8('.');
    return p.out;
}
}  // namespace attn::torch_io
