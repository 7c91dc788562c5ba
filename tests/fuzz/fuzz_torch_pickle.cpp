// libFuzzer harness for the pickle reader of PyTorch checkpoints: any bytes either unpickle or throw attn::Error,
// never crash, hang or run anything.
#include <cstdint>
#include <string>
#include <vector>

#include "io/torch_pickle.h"
#include "vk/check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string bytes(reinterpret_cast<const char*>(data), size);
    try {
        attn::torch_io::ValuePtr v = attn::torch_io::unpickle(bytes, "fuzz", true);
        // walk it as a reader would
        std::vector<const attn::torch_io::Value*> todo{v.get()};
        size_t seen = 0;
        while (!todo.empty() && seen++ < 100000) {
            const attn::torch_io::Value* x = todo.back();
            todo.pop_back();
            if (x->kind == attn::torch_io::Value::Kind::Tensor) (void)x->tensor.numel();
            (void)x->get("model");
            for (auto& c : x->items) todo.push_back(c.get());
            for (auto& [k, c] : x->dict) todo.push_back(k.get()), todo.push_back(c.get());
        }
    } catch (const attn::Error&) {
    }
    return 0;
}
