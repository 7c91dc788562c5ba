// The one place that decides whether a path may be written, and writes it. Every writer of the app goes through
// here: checkpoints, the autosave, --metrics, the loss CSV export, screenshots and their layout sidecars, set-asides.
//
// Rules:
//  - A file the run reads or writes under another role (the corpus, the checkpoint, the metrics) is never written
//    as something else. Identity is (device, inode), so symlinks, hard links and `../` are seen through; a file not
//    there yet is compared by its resolved path.
//  - A file is replaced atomically: a unique temporary file beside it, created exclusively (never through a link),
//    filled, fsynced, read back and compared, then renamed over it. On any failure the old file is untouched.
//  - Temporary files are named `.attnlab-HASH-PID-XXXXXX` (short: a 255-byte name still gets one); those of a
//    process that is gone (a SIGKILL) are removed at the next write to the same path.
//  - Setting a file aside never renames over another file.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace attn {

// Declares that the run uses `path` as `role` ("the corpus", "the checkpoint", "the --metrics file", ...); a role
// may name several files (the checkpoint resumed and the one saved). Thread-safe, as is forget_files.
void register_file(const std::string& role, const std::string& path);
// Forgets every file of `role` (the window's corpus or checkpoint field changed).
void forget_files(const std::string& role);

// Whether `a` and `b` name the same file: (device, inode) when both exist, else their resolved absolute paths.
bool same_file(const std::string& a, const std::string& b);

// "" when `path` may be written as `role`, else one line saying why not (it is the corpus, a folder, ...).
std::string write_problem(const std::string& path, const std::string& role);

// Receives a file's bytes; counts and hashes them so the written file can be checked.
class FileSink {
public:
    virtual ~FileSink() = default;
    virtual void put(const void* data, size_t bytes) = 0;
    void put(const std::string& s) { put(s.data(), s.size()); }
};

// Writes `path` atomically as `role` with the bytes `fill` puts (rules above). Throws attn::Error with one line on
// any problem; `path` is then as it was.
void write_file_atomic(const std::string& path, const std::string& role, const std::function<void(FileSink&)>& fill);
inline void write_file_atomic(const std::string& path, const std::string& role, const std::string& bytes) {
    write_file_atomic(path, role, [&](FileSink& s) { s.put(bytes); });
}

// Several files that belong together (nanoGPT's ckpt.pt and meta.pkl), each written as write_file_atomic does; none
// replaces its destination before all of them are written and read back. Throws attn::Error; on a failure before
// the renames every destination is as it was.
struct FileWrite {
    std::string path, role, bytes;
};
void write_files_atomic(const std::vector<FileWrite>& files);

// Renames `path` to STEM-set-aside-YYYYmmdd-HHMMSS[-N]EXT beside it (EXT: its extension), never over an existing
// file. Returns the new name; throws attn::Error when it cannot.
std::string set_aside(const std::string& path);

// Opens fds 0, 1 and 2 on /dev/null where they are closed, so that no file the app opens later becomes stderr (and
// receives messages meant for the terminal). Call first thing in main.
void guard_standard_fds();

// The bytes of `path` to its end (a pipe's too), or its first limit + 1 bytes when it holds more (the caller says it
// is too large). Throws attn::Error "cannot read WHAT 'PATH': <strerror>" (what: "checkpoint", "corpus") when it
// cannot be opened or a read fails (EIO: a failing disk), never a std::ios_base::failure.
std::string read_file(const std::string& path, const std::string& what, size_t limit = size_t(-1) - 1);

}  // namespace attn
