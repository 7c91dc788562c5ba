// Reading PyTorch's checkpoint format without PyTorch (the unpickler in pickle.cpp, the pickler in pickler.cpp,
// the torch.save layout in torch_file.cpp, its zip container in zip_reader.h): `torch.save` files (a zip of `<name>/data.pkl` and one
// entry per tensor storage, `<name>/data/<key>`) and plain pickles such as nanoGPT's `meta.pkl`.
//
// The unpickler understands exactly what torch.save (protocol 2) and Python's pickle.dump (protocols 2 to 4) write
// for dicts, lists, tuples, numbers, strings and tensors. It executes nothing: the only globals it accepts are
// collections.OrderedDict, torch._utils._rebuild_tensor_v2 / _rebuild_parameter and the torch *Storage types, each
// interpreted here; any other global, opcode or malformed input is refused with one line naming the file.
#pragma once
#include <cstdint>
#include <map>
#include <unordered_map>
#include <memory>
#include <string>
#include <vector>

namespace attn::zip {
class Reader;
struct Entry;
}  // namespace attn::zip

namespace attn::torch_io {

// A tensor as the pickle describes it: which storage, its element type and the view into it.
struct TensorRef {
    std::string storage;  // the storage key: its bytes are `<name>/data/<storage>`
    std::string dtype;    // "float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool"
    int64_t storage_numel = 0;
    int64_t offset = 0;   // in elements
    std::vector<int64_t> shape, stride;
    int64_t numel() const;
};

// containers inside containers: the deepest the unpickler accepts and the pickler writes
constexpr int k_max_pickle_depth = 64;

struct Value;
using ValuePtr = std::shared_ptr<Value>;

// One unpickled Python value. Dicts keep their insertion order (as Python's do).
struct Value {
    enum class Kind { None, Bool, Int, Float, Str, Bytes, Tuple, List, Dict, Tensor, Global };
    Kind kind = Kind::None;
    bool b = false;
    int64_t i = 0;
    double f = 0;
    std::string s;                                    // Str, Bytes; Global: "module name"
    std::vector<ValuePtr> items;                      // Tuple, List
    std::vector<std::pair<ValuePtr, ValuePtr>> dict;  // Dict
    TensorRef tensor;                                 // Tensor

    // The value under string key `key` of a Dict, or nullptr.
    ValuePtr get(const std::string& key) const;
    // Python's name of the kind, for messages: "dict", "int", "tensor", ...
    const char* kind_name() const;
};

// Unpickles `bytes` (from `what`, named in messages). `allow_tensors`: BINPERSID storages and tensors are accepted
// (a torch.save data.pkl); otherwise they are refused as any other foreign object.
ValuePtr unpickle(const std::string& bytes, const std::string& what, bool allow_tensors = false);

// A torch.save file, opened: the unpickled object, and its storages read from the archive when first used.
// Opening checks the container (io/zip_reader.h: stored entries, no overlaps, every entry's CRC-32) and that each
// storage's entry holds exactly the bytes its elements need, so reading values never needs more memory than the
// file's size.
class TorchFile {
public:
    // Throws attn::Error (one line) for a file that is not a torch.save zip or holds anything the unpickler refuses.
    explicit TorchFile(const std::string& path);
    ~TorchFile();
    const ValuePtr& root() const { return m_root; }
    const std::string& path() const { return m_path; }
    uint64_t file_size() const;
    // The tensor's elements in row-major order of its shape, converted to double (float32/64, float16, bfloat16,
    // integers). Throws when the view reaches outside its storage.
    std::vector<double> values(const TensorRef& t) const;

private:
    struct StorageInfo {
        std::string dtype;
        int64_t numel = 0;
        const zip::Entry* entry = nullptr;
    };
    const std::string& storage(const std::string& key) const;  // read on first use

    std::string m_path, m_prefix;  // m_prefix: "<name>/", taken from the archive's first entry
    std::unique_ptr<zip::Reader> m_zip;
    ValuePtr m_root;
    std::map<std::string, StorageInfo> m_storage_info;                // key -> what the pickle says of it
    mutable std::unordered_map<std::string, std::string> m_storages;  // key -> bytes, once read
};

// Bytes per element of a dtype name above, 0 if unknown.
int dtype_size(const std::string& dtype);

// --- writing: what torch.load and pickle.load read back ---

// Builders for the values written below.
ValuePtr none();
ValuePtr boolean(bool b);
ValuePtr integer(int64_t i);
ValuePtr real(double f);
ValuePtr str(const std::string& s);
ValuePtr tuple(std::vector<ValuePtr> items);
ValuePtr list(std::vector<ValuePtr> items);
ValuePtr dict(std::vector<std::pair<std::string, ValuePtr>> items);  // string keys, in this order

// Pickles `v` with protocol 2 (what torch.save writes; every Python 3 reads it). Tensors become
// _rebuild_tensor_v2 calls on BINPERSID storages ('storage', torch.FloatStorage, key, 'cpu', numel); dicts with
// integer keys (nanoGPT's itos) are written as they are. Bytes and globals are refused.
std::string pickle(const ValuePtr& v);

// A torch.save file being made: float32 tensors added, then written atomically (io/files.h) as a zip of
// `<name>/data.pkl`, `<name>/data/<key>`, `<name>/version` and `<name>/byteorder`, entries stored uncompressed.
class TorchWriter {
public:
    // A new float32 tensor of `shape` holding `data` (row-major), in a storage of its own.
    ValuePtr tensor(const std::vector<float>& data, const std::vector<int64_t>& shape);
    // `root` pickled into `path` (role: as files.h names it, e.g. "the exported checkpoint"); `name` is the
    // archive's folder (torch.save uses the file's stem).
    void save(const std::string& path, const std::string& role, const ValuePtr& root, const std::string& name) const;
    // The same file's bytes, for a caller that writes it with others (write_files_atomic).
    std::string bytes(const ValuePtr& root, const std::string& name) const;

private:
    std::vector<std::string> m_storages;  // key = index
};

}  // namespace attn::torch_io
