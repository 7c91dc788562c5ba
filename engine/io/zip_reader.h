// Reading the zip container of torch.save files, trusting nothing in it.
//
// torch.save writes a zip archive whose entries are all stored (not compressed), found through the central
// directory at the end (zip64 records for large files). This reader accepts exactly that: an entry that is
// compressed or encrypted, two entries that share bytes, a size or offset past the end of the file, or bytes that do
// not match the entry's CRC-32 are refused with one line naming the entry. Since every entry is stored and no two
// overlap, the bytes of all entries together are at most the file's size: nothing read here can need more memory
// than the file has bytes.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attn::zip {

// One entry of the central directory, checked against its local header.
struct Entry {
    std::string name;
    uint64_t header_offset = 0;  // its local header
    uint64_t data_offset = 0;    // its bytes: [data_offset, data_offset + size)
    uint64_t size = 0;
    uint32_t crc = 0;
};

// The CRC-32 (zip's, polynomial 0xEDB88320) of `n` bytes, continuing from `crc` (0 to start).
uint32_t crc32(const void* data, size_t n, uint32_t crc = 0);

class Reader {
public:
    // Opens `path` and reads its central directory. Throws attn::Error (one line) when the file cannot be read or is
    // not a zip archive as torch.save writes it.
    explicit Reader(const std::string& path);
    ~Reader() = default;
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;

    const std::string& path() const { return m_path; }
    uint64_t file_size() const { return m_size; }
    // In the order of the central directory.
    const std::vector<Entry>& entries() const { return m_entries; }
    // nullptr when there is no entry of that name.
    const Entry* find(const std::string& name) const;
    // The entry's bytes, their CRC-32 checked. Throws attn::Error naming the entry when it does not match.
    std::string read(const Entry& e) const;
    // Checks the entry's CRC-32 reading it in chunks (no copy kept). Throws as read() does.
    void verify(const Entry& e) const;

private:
    // Reads [offset, offset + n) into `out`; "cannot read" with the system's reason on an I/O error, "damaged" on a
    // short file.
    void pread_all(uint64_t offset, void* out, size_t n) const;
    [[noreturn]] void damaged(const std::string& why) const;

    // The file descriptor, closed by its own destructor: also when the Reader's constructor throws (a refused file),
    // when ~Reader is not run.
    struct Fd {
        int fd = -1;
        ~Fd();
    };
    std::string m_path;
    Fd m_file;
    int& m_fd = m_file.fd;
    uint64_t m_size = 0;
    std::vector<Entry> m_entries;
    std::map<std::string, size_t> m_by_name;
};

}  // namespace attn::zip
