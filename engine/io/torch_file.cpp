// torch.save's layout: its zip of data.pkl and storages read into tensors, and written (torch_pickle.h).
#include "io/torch_pickle.h"

#include <zip.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_set>

#include "io/files.h"
#include "io/zip_reader.h"
#include "vk/check.h"

namespace attn::torch_io {

namespace {
double half_to_double(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? std::ldexp(double(m), -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(double(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}
}  // namespace

TorchFile::TorchFile(const std::string& path) : m_path(path), m_zip(std::make_unique<zip::Reader>(path)) {
    const zip::Entry& first = m_zip->entries().front();
    size_t slash = first.name.find('/');
    if (slash == std::string::npos || slash == 0)
        throw Error("'" + path + "' is a zip archive but not a PyTorch checkpoint (its first entry is '" + first.name + "')");
    m_prefix = first.name.substr(0, slash + 1);
    const zip::Entry* pkl = m_zip->find(m_prefix + "data.pkl");
    if (!pkl) throw Error("'" + path + "' is not a PyTorch checkpoint: it has no " + m_prefix + "data.pkl");
    m_root = unpickle(m_zip->read(*pkl), path, true);

    // every storage a tensor names, each value visited once: a pickle may share one value many times (memo), and a
    // walk that followed every reference could take 2^depth steps
    std::unordered_set<const Value*> seen;
    std::vector<const Value*> todo{m_root.get()};
    while (!todo.empty()) {
        const Value* v = todo.back();
        todo.pop_back();
        if (!seen.insert(v).second) continue;
        if (v->kind == Value::Kind::Tensor) {
            const TensorRef& t = v->tensor;
            auto [it, fresh] = m_storage_info.emplace(t.storage, StorageInfo{t.dtype, t.storage_numel, nullptr});
            if (!fresh && (it->second.dtype != t.dtype || it->second.numel != t.storage_numel))
                throw Error("'" + path + "' is damaged: storage " + t.storage + " is named with two sizes or types");
        }
        for (auto& c : v->items) todo.push_back(c.get());
        for (auto& [k, c] : v->dict) todo.push_back(k.get()), todo.push_back(c.get());
    }
    // each storage's entry holds exactly the bytes its elements need: checked before any is read, so that a size
    // the pickle claims cannot make us read (or allocate) more than the file has
    for (auto& [key, info] : m_storage_info) {
        const zip::Entry* e = m_zip->find(m_prefix + "data/" + key);
        if (!e) throw Error("'" + path + "' is damaged: it has no entry for storage " + key);
        uint64_t want = uint64_t(info.numel) * uint64_t(dtype_size(info.dtype));
        if (e->size != want)
            throw Error("'" + path + "' is damaged: entry '" + e->name + "' holds " + std::to_string(e->size) +
                        " bytes, but its storage is " + std::to_string(info.numel) + " " + info.dtype + " elements (" +
                        std::to_string(want) + " bytes)");
        info.entry = e;
    }
    // every entry's CRC-32, so that a damaged file is refused whatever part of it is used
    for (const zip::Entry& e : m_zip->entries()) m_zip->verify(e);
}

TorchFile::~TorchFile() = default;

uint64_t TorchFile::file_size() const { return m_zip->file_size(); }

const std::string& TorchFile::storage(const std::string& key) const {
    auto it = m_storages.find(key);
    if (it != m_storages.end()) return it->second;
    auto info = m_storage_info.find(key);
    if (info == m_storage_info.end()) throw Error("'" + m_path + "': no storage " + key);
    return m_storages.emplace(key, m_zip->read(*info->second.entry)).first->second;
}

std::vector<double> TorchFile::values(const TensorRef& t) const {
    const std::string& b = storage(t.storage);
    const int size = dtype_size(t.dtype);
    int64_t n = t.numel();
    // a view may repeat elements (stride 0), but not into billions of values from a small storage
    if (n > t.storage_numel && n > (int64_t(1) << 24))
        throw Error("'" + m_path + "': a tensor of " + std::to_string(n) + " elements views a storage of " +
                    std::to_string(t.storage_numel));
    std::vector<double> out;
    out.reserve(size_t(n));
    std::vector<int64_t> idx(t.shape.size(), 0);
    for (int64_t k = 0; k < n; k++) {
        int64_t e = t.offset;
        for (size_t d = 0; d < idx.size(); d++) e += idx[d] * t.stride[d];
        if (e < 0 || e >= t.storage_numel || size_t(e + 1) * size_t(size) > b.size())
            throw Error("'" + m_path + "': a tensor reaches past storage " + t.storage);
        const char* p = b.data() + size_t(e) * size_t(size);
        double v = 0;
        if (t.dtype == "float32") { float f; std::memcpy(&f, p, 4); v = f; }
        else if (t.dtype == "float64") { std::memcpy(&v, p, 8); }
        else if (t.dtype == "float16") { uint16_t h; std::memcpy(&h, p, 2); v = half_to_double(h); }
        else if (t.dtype == "bfloat16") { uint16_t h; std::memcpy(&h, p, 2); uint32_t u = uint32_t(h) << 16; float f; std::memcpy(&f, &u, 4); v = f; }
        else if (t.dtype == "int64") { int64_t i; std::memcpy(&i, p, 8); v = double(i); }
        else if (t.dtype == "int32") { int32_t i; std::memcpy(&i, p, 4); v = i; }
        else if (t.dtype == "uint8" || t.dtype == "bool") { v = static_cast<unsigned char>(*p); }
        out.push_back(v);
        for (size_t d = idx.size(); d-- > 0;) {  // the next index, last dimension fastest
            if (++idx[d] < t.shape[d]) break;
            idx[d] = 0;
        }
    }
    return out;
}

// --- writing ---

ValuePtr TorchWriter::tensor(const std::vector<float>& data, const std::vector<int64_t>& shape) {
    auto v = std::make_shared<Value>();
    v->kind = Value::Kind::Tensor;
    TensorRef& t = v->tensor;
    t.storage = std::to_string(m_storages.size());
    t.dtype = "float32";
    t.shape = shape;
    t.stride.assign(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;) t.stride[d - 1] = t.stride[d] * shape[d];
    if (t.numel() != int64_t(data.size())) throw Error("TorchWriter: a tensor's shape does not match its data");
    t.storage_numel = int64_t(data.size());
    m_storages.emplace_back(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(float));
    return v;
}

void TorchWriter::save(const std::string& path, const std::string& role, const ValuePtr& root,
                       const std::string& name) const {
    write_file_atomic(path, role, bytes(root, name));
}

std::string TorchWriter::bytes(const ValuePtr& root, const std::string& name) const {
    if (name.empty() || name.find('/') != std::string::npos) throw Error("TorchWriter: a bad archive name '" + name + "'");
    std::string pkl = pickle(root);
    // the zip built in memory (libzip on a buffer source), then written whole through write_file_atomic
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t* src = zip_source_buffer_create(nullptr, 0, 0, &ze);
    if (!src) throw Error(std::string("cannot build a zip archive: ") + zip_error_strerror(&ze));
    zip_source_keep(src);
    zip_t* z = zip_open_from_source(src, ZIP_TRUNCATE, &ze);
    if (!z) {
        zip_source_free(src);
        throw Error(std::string("cannot build a zip archive: ") + zip_error_strerror(&ze));
    }
    auto fail = [&](const std::string& what) {
        std::string why = zip_strerror(z);
        zip_discard(z);
        zip_source_free(src);
        throw Error("cannot build the checkpoint's zip archive (" + what + ": " + why + ")");
    };
    auto add = [&](const std::string& entry, const std::string& bytes) {
        zip_source_t* s = zip_source_buffer(z, bytes.data(), bytes.size(), 0);  // copied at zip_close
        if (!s) fail(entry);
        zip_int64_t idx = zip_file_add(z, (name + "/" + entry).c_str(), s, ZIP_FL_ENC_UTF_8);
        if (idx < 0) {
            zip_source_free(s);
            fail(entry);
        }
        if (zip_set_file_compression(z, zip_uint64_t(idx), ZIP_CM_STORE, 0) != 0) fail(entry);
    };
    add("data.pkl", pkl);
    for (size_t k = 0; k < m_storages.size(); k++) add("data/" + std::to_string(k), m_storages[k]);
    static const std::string version = "3\n", byteorder = "little";  // zip_source_buffer keeps pointers until zip_close
    add("version", version);
    add("byteorder", byteorder);
    if (zip_close(z) != 0) fail("closing");
    std::string bytes;
    if (zip_source_open(src) != 0) {
        zip_source_free(src);
        throw Error("cannot read back the zip archive built in memory");
    }
    char buf[65536];
    zip_int64_t n;
    while ((n = zip_source_read(src, buf, sizeof buf)) > 0) bytes.append(buf, size_t(n));
    zip_source_close(src);
    zip_source_free(src);
    if (n < 0) throw Error("cannot read back the zip archive built in memory");
    return bytes;
}

}  // namespace attn::torch_io
