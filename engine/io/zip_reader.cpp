// The zip container of torch.save files, read without trusting it (zip_reader.h).
#include "io/zip_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vk/check.h"

namespace attn::zip {

uint32_t crc32(const void* data, size_t n, uint32_t crc) {
    static const auto table = [] {
        std::vector<uint32_t> t(256);
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    const auto* p = static_cast<const unsigned char*>(data);
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

namespace {
constexpr uint32_t k_local = 0x04034b50, k_central = 0x02014b50, k_end = 0x06054b50, k_end64 = 0x06064b50,
                   k_locator64 = 0x07064b50;

uint64_t le(const unsigned char* p, int n) {
    uint64_t v = 0;
    for (int k = 0; k < n; k++) v |= uint64_t(p[k]) << (8 * k);
    return v;
}
}  // namespace

void Reader::damaged(const std::string& why) const {
    throw Error("'" + m_path + "' is not a PyTorch checkpoint Attention Lab can read: " + why);
}

void Reader::pread_all(uint64_t offset, void* out, size_t n) const {
    auto* p = static_cast<char*>(out);
    while (n > 0) {
        ssize_t r = ::pread(m_fd, p, n, off_t(offset));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) throw Error("cannot read '" + m_path + "': " + std::strerror(errno));
        if (r == 0) damaged("it ends early (a truncated file)");
        p += r;
        n -= size_t(r);
        offset += uint64_t(r);
    }
}

Reader::Reader(const std::string& path) : m_path(path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
        throw Error("cannot open '" + path + "' (" + std::strerror(errno) + "): give the path of a nanoGPT ckpt.pt");
    if (!S_ISREG(st.st_mode)) throw Error("cannot open '" + path + "': it is not a regular file: give the path of a nanoGPT ckpt.pt");
    m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (m_fd < 0) throw Error("cannot open '" + path + "' (" + std::strerror(errno) + "): give the path of a nanoGPT ckpt.pt");
    if (::fstat(m_fd, &st) != 0) throw Error("cannot read '" + path + "': " + std::strerror(errno));
    m_size = uint64_t(st.st_size);
    const char* not_zip = "torch.save writes a zip archive; a file from before PyTorch 1.6 must be saved again with a newer one";
    if (m_size < 22) damaged(std::string("it is too short to be a zip archive (") + not_zip + ")");

    // the end-of-central-directory record: 22 bytes and a comment of up to 65535, at the end
    size_t tail_n = size_t(std::min<uint64_t>(m_size, 22 + 65535));
    std::vector<unsigned char> tail(tail_n);
    pread_all(m_size - tail_n, tail.data(), tail_n);
    size_t end = std::string::npos;
    for (size_t i = tail_n - 22 + 1; i-- > 0;)
        if (le(&tail[i], 4) == k_end && i + 22 + le(&tail[i + 20], 2) <= tail_n) {
            end = i;
            break;
        }
    if (end == std::string::npos) damaged(std::string("it is not a zip archive (") + not_zip + ")");
    const uint64_t end_at = m_size - tail_n + end;
    uint64_t count = le(&tail[end + 10], 2), cd_size = le(&tail[end + 12], 4), cd_offset = le(&tail[end + 16], 4);
    if (le(&tail[end + 4], 2) != 0 || le(&tail[end + 6], 2) != 0) damaged("it is a zip archive split over several files");
    uint64_t cd_end_limit = end_at;
    if (count == 0xffff || cd_size == 0xffffffff || cd_offset == 0xffffffff) {  // zip64: the locator just before
        if (end_at < 20) damaged("its zip64 end record is missing");
        unsigned char loc[20];
        pread_all(end_at - 20, loc, 20);
        if (le(loc, 4) != k_locator64) damaged("its zip64 end record is missing");
        uint64_t rec = le(loc + 8, 8);
        if (rec > end_at - 20 || end_at - 20 - rec < 56) damaged("its zip64 end record is out of place");
        unsigned char r[56];
        pread_all(rec, r, 56);
        if (le(r, 4) != k_end64) damaged("its zip64 end record is damaged");
        count = le(r + 32, 8);
        cd_size = le(r + 40, 8);
        cd_offset = le(r + 48, 8);
        cd_end_limit = rec;
    }
    if (cd_offset > cd_end_limit || cd_size > cd_end_limit - cd_offset)
        damaged("its central directory lies outside the file");
    if (count == 0) damaged("it is an empty zip archive");
    if (count > cd_size / 46) damaged("its central directory is shorter than its entries");

    std::vector<unsigned char> cd(static_cast<size_t>(cd_size));
    pread_all(cd_offset, cd.data(), cd.size());
    size_t at = 0;
    for (uint64_t k = 0; k < count; k++) {
        if (cd.size() - at < 46 || le(&cd[at], 4) != k_central) damaged("its central directory is damaged");
        const unsigned char* h = &cd[at];
        uint64_t flags = le(h + 8, 2), method = le(h + 10, 2);
        Entry e;
        e.crc = uint32_t(le(h + 16, 4));
        uint64_t csize = le(h + 20, 4), usize = le(h + 24, 4), name_n = le(h + 28, 2), extra_n = le(h + 30, 2),
                 comment_n = le(h + 32, 2);
        e.header_offset = le(h + 42, 4);
        if (cd.size() - at - 46 < name_n + extra_n + comment_n) damaged("its central directory is damaged");
        e.name.assign(reinterpret_cast<const char*>(h + 46), size_t(name_n));
        // zip64 sizes and offset, in this order, for the fields that say 0xffffffff
        const unsigned char* x = h + 46 + name_n;
        for (uint64_t xa = 0; xa + 4 <= extra_n;) {
            uint64_t id = le(x + xa, 2), n = le(x + xa + 2, 2);
            if (xa + 4 + n > extra_n) damaged("entry '" + e.name + "' has a damaged extra field");
            if (id == 1) {
                uint64_t p = xa + 4;
                auto take = [&](uint64_t& field) {
                    if (field != 0xffffffff) return;
                    if (p + 8 > xa + 4 + n) damaged("entry '" + e.name + "' has a damaged zip64 field");
                    field = le(x + p, 8);
                    p += 8;
                };
                take(usize);
                take(csize);
                take(e.header_offset);
            }
            xa += 4 + n;
        }
        at += size_t(46 + name_n + extra_n + comment_n);
        if (flags & 1) damaged("entry '" + e.name + "' is encrypted");
        if (method != 0 || csize != usize)
            damaged("entry '" + e.name + "' is compressed; torch.save stores every entry as it is (save the checkpoint "
                    "again with torch.save)");
        e.size = usize;
        // the local header: its own name and extra field come before the bytes
        if (e.header_offset > cd_offset || cd_offset - e.header_offset < 30)
            damaged("entry '" + e.name + "' lies outside the file's data");
        unsigned char lh[30];
        pread_all(e.header_offset, lh, 30);
        if (le(lh, 4) != k_local) damaged("entry '" + e.name + "' has no local header where the directory says");
        uint64_t lname_n = le(lh + 26, 2), lextra_n = le(lh + 28, 2);
        e.data_offset = e.header_offset + 30 + lname_n + lextra_n;
        if (e.data_offset > cd_offset || e.size > cd_offset - e.data_offset)
            damaged("entry '" + e.name + "' reaches past the file's data (" + std::to_string(e.size) + " bytes claimed)");
        std::string lname(size_t(lname_n), '\0');
        pread_all(e.header_offset + 30, lname.data(), lname.size());
        if (lname != e.name) damaged("entry '" + e.name + "' has another name in its local header");
        if (!m_by_name.emplace(e.name, m_entries.size()).second) damaged("entry '" + e.name + "' is there twice");
        m_entries.push_back(std::move(e));
    }
    // no two entries share bytes (a directory offset pointing into another entry's data)
    std::vector<const Entry*> order;
    for (const Entry& e : m_entries) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) { return a->header_offset < b->header_offset; });
    for (size_t i = 1; i < order.size(); i++)
        if (order[i]->header_offset < order[i - 1]->data_offset + order[i - 1]->size)
            damaged("entries '" + order[i - 1]->name + "' and '" + order[i]->name + "' overlap (a damaged directory)");
}

Reader::Fd::~Fd() {
    if (fd >= 0) ::close(fd);
}

const Entry* Reader::find(const std::string& name) const {
    auto it = m_by_name.find(name);
    return it == m_by_name.end() ? nullptr : &m_entries[it->second];
}

std::string Reader::read(const Entry& e) const {
    std::string bytes(size_t(e.size), '\0');  // at most the file's size: checked when the directory was read
    pread_all(e.data_offset, bytes.data(), bytes.size());
    if (crc32(bytes.data(), bytes.size()) != e.crc)
        damaged("entry '" + e.name + "' is damaged (its bytes do not match its CRC-32)");
    return bytes;
}

void Reader::verify(const Entry& e) const {
    std::vector<char> chunk(size_t(std::min<uint64_t>(e.size, uint64_t(1) << 20)));
    uint32_t crc = 0;
    for (uint64_t done = 0; done < e.size;) {
        size_t n = size_t(std::min<uint64_t>(chunk.size(), e.size - done));
        pread_all(e.data_offset + done, chunk.data(), n);
        crc = crc32(chunk.data(), n, crc);
        done += n;
    }
    if (crc != e.crc) damaged("entry '" + e.name + "' is damaged (its bytes do not match its CRC-32)");
}

}  // namespace attn::zip
