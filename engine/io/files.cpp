// Writing files safely (files.h): roles, identity, atomic replace with read-back, stale temporary files, set-asides.
#include "io/files.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "vk/check.h"

namespace attn {

namespace fs = std::filesystem;

static std::mutex g_roles_mutex;
static std::multimap<std::string, std::string> g_roles;  // role -> path

void register_file(const std::string& role, const std::string& path) {
    if (path.empty()) return;
    std::lock_guard<std::mutex> lock(g_roles_mutex);
    auto [b, e] = g_roles.equal_range(role);
    for (auto it = b; it != e; ++it)
        if (it->second == path) return;
    g_roles.emplace(role, path);
}

void forget_files(const std::string& role) {
    std::lock_guard<std::mutex> lock(g_roles_mutex);
    g_roles.erase(role);
}

static std::string resolved(const std::string& p) {
    std::error_code ec;
    fs::path abs = fs::absolute(p, ec);
    if (ec) return p;
    fs::path r = fs::weakly_canonical(abs, ec);
    return (ec ? abs.lexically_normal() : r).string();
}

bool same_file(const std::string& a, const std::string& b) {
    if (a.empty() || b.empty()) return false;
    struct stat sa, sb;
    if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return resolved(a) == resolved(b);
}

std::string write_problem(const std::string& path, const std::string& role) {
    if (path.empty()) return "cannot write " + role + ": no file name was given";
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        return "cannot write " + role + " to '" + path + "': it is a folder: name a file in it";
    std::lock_guard<std::mutex> lock(g_roles_mutex);
    for (const auto& [other, p] : g_roles)
        if (other != role && same_file(path, p))
            return "cannot write " + role + " to '" + path + "': it is " + other +
                   (p == path ? "" : " ('" + p + "', the same file)") + ", which it would destroy: name another file";
    return "";
}

static uint64_t fnv1a(const void* p, size_t n, uint64_t h = 0xcbf29ce484222325ull) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

namespace {
// Writes to fd, keeping the count and hash of what was written; the first error is kept and later puts do nothing.
class FdSink : public FileSink {
public:
    explicit FdSink(int fd) : m_fd(fd) {}
    void put(const void* data, size_t bytes) override {
        const char* c = static_cast<const char*>(data);
        m_hash = fnv1a(c, bytes, m_hash);
        m_count += bytes;
        while (bytes > 0 && m_errno == 0) {
            ssize_t w = ::write(m_fd, c, bytes);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                m_errno = w < 0 ? errno : EIO;
                break;
            }
            c += w;
            bytes -= size_t(w);
        }
    }
    int error() const { return m_errno; }
    uint64_t hash() const { return m_hash; }
    size_t count() const { return m_count; }

private:
    int m_fd;
    int m_errno = 0;
    uint64_t m_hash = 0xcbf29ce484222325ull;
    size_t m_count = 0;
};

// The folder and name of a path ("." for a bare name).
struct Split { std::string dir, name; };
Split split(const std::string& path) {
    size_t slash = path.rfind('/');
    if (slash == std::string::npos) return {".", path};
    return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}
}  // namespace

// Temporary files for `name`: .attnlab-HASH-PID-XXXXXX, HASH the name's (8 hex digits).
static std::string temp_prefix(const std::string& name) {
    char h[16];
    std::snprintf(h, sizeof h, "%08x", unsigned(fnv1a(name.data(), name.size()) & 0xffffffffu));
    return std::string(".attnlab-") + h + "-";
}

// Removes the temporary files for `name` in `dir` left by processes that no longer run (killed mid-write).
static void remove_stale_temps(const std::string& dir, const std::string& name) {
    std::string prefix = temp_prefix(name);
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    std::vector<std::string> stale;
    while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n.compare(0, prefix.size(), prefix) != 0) continue;
        long pid = std::strtol(n.c_str() + prefix.size(), nullptr, 10);
        if (pid <= 0 || pid == long(::getpid())) continue;
        if (::kill(pid_t(pid), 0) == -1 && errno == ESRCH) stale.push_back(dir + "/" + n);
    }
    ::closedir(d);
    for (const auto& s : stale) ::unlink(s.c_str());
}

namespace {
// A file written beside its destination, fsynced and read back, waiting to be renamed into place.
struct Staged {
    std::string path, role, tmp, dir;
    bool existed = false;
};

// Writes `fill`'s bytes to a new temporary file beside `path` (the rules in files.h) and checks them.
Staged stage_file(const std::string& path, const std::string& role, const std::function<void(FileSink&)>& fill) {
    if (std::string why = write_problem(path, role); !why.empty()) throw Error(why);
    struct stat st;
    bool existed = ::stat(path.c_str(), &st) == 0;
    if (existed && !S_ISREG(st.st_mode))  // a rename would replace a device such as /dev/null
        throw Error("cannot write " + role + " to '" + path + "': it is not a regular file (a device or pipe): name a file");
    auto fail = [&](const std::string& why) {
        return Error("cannot write " + role + " to '" + path + "': " + why +
                     (existed ? "; the file there is untouched" : "; nothing was written"));
    };
    Split sp = split(path);
    remove_stale_temps(sp.dir, sp.name);
    std::string tmp = sp.dir + "/" + temp_prefix(sp.name) + std::to_string(::getpid()) + "-XXXXXX";
    std::vector<char> buf(tmp.begin(), tmp.end());
    buf.push_back('\0');
    int fd = ::mkostemp(buf.data(), O_CLOEXEC);  // O_CREAT | O_EXCL: never an existing file, never through a link
    if (fd < 0) throw fail(std::string(std::strerror(errno)) + " (check the folder exists and is writable)");
    tmp = buf.data();
    auto abandon = [&](const std::string& why) {
        ::close(fd);
        ::unlink(tmp.c_str());
        return fail(why);
    };
    ::fchmod(fd, existed ? (st.st_mode & 07777) : 0644);
    FdSink sink(fd);
    try {
        fill(sink);
    } catch (...) {
        ::close(fd);
        ::unlink(tmp.c_str());
        throw;
    }
    if (sink.error()) throw abandon(std::strerror(sink.error()));
    if (::fsync(fd) != 0) throw abandon(std::string("fsync: ") + std::strerror(errno));
    // read back: the file holds exactly what was put (nothing else wrote into it, the disk took it all)
    struct stat wst;
    if (::fstat(fd, &wst) != 0 || size_t(wst.st_size) != sink.count())
        throw abandon("the written file has " + std::to_string(wst.st_size) + " bytes, not " + std::to_string(sink.count()) +
                      " (something else wrote into it)");
    {
        std::vector<char> rb(1 << 20);
        uint64_t h = 0xcbf29ce484222325ull;
        off_t at = 0;
        while (size_t(at) < sink.count()) {
            ssize_t r = ::pread(fd, rb.data(), rb.size(), at);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) throw abandon("reading it back failed");
            h = fnv1a(rb.data(), size_t(r), h);
            at += r;
        }
        if (h != sink.hash()) throw abandon("what was read back differs from what was written");
    }
    if (::close(fd) != 0) {
        int e = errno;
        ::unlink(tmp.c_str());
        throw fail(std::string("close: ") + std::strerror(e));
    }
    return {path, role, tmp, sp.dir, existed};
}

// Renames the staged file over its destination, and makes the rename itself survive a crash.
void commit(const Staged& s) {
    if (std::rename(s.tmp.c_str(), s.path.c_str()) != 0) {
        int e = errno;
        ::unlink(s.tmp.c_str());
        throw Error("cannot write " + s.role + " to '" + s.path + "': rename: " + std::strerror(e) +
                    (s.existed ? "; the file there is untouched" : "; nothing was written"));
    }
    int dfd = ::open(s.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
}
}  // namespace

void write_file_atomic(const std::string& path, const std::string& role, const std::function<void(FileSink&)>& fill) {
    commit(stage_file(path, role, fill));
}

void write_files_atomic(const std::vector<FileWrite>& files) {
    std::vector<Staged> staged;
    try {
        for (const FileWrite& f : files) staged.push_back(stage_file(f.path, f.role, [&](FileSink& s) { s.put(f.bytes); }));
    } catch (...) {
        for (const Staged& s : staged) ::unlink(s.tmp.c_str());
        throw;
    }
    for (size_t i = 0; i < staged.size(); i++) {
        try {
            commit(staged[i]);
        } catch (...) {
            for (size_t j = i + 1; j < staged.size(); j++) ::unlink(staged[j].tmp.c_str());
            throw;
        }
    }
}

std::string set_aside(const std::string& path) {
    fs::path p(path);
    std::string ext = p.extension().string();
    std::string stem = path.substr(0, path.size() - ext.size());
    char stamp[32];
    std::time_t now = std::time(nullptr);
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
    for (int n = 1; n < 1000; n++) {
        std::string cand = stem;
        cand.append(".set-aside-").append(stamp);
        if (n > 1) cand.append("-").append(std::to_string(n));
        cand.append(ext);
        // a hard link fails where the name exists (never replaces it); the old name is removed once it is made
        if (::link(path.c_str(), cand.c_str()) == 0) {
            ::unlink(path.c_str());
            return cand;
        }
        if (errno == EEXIST) continue;
        int e = errno;
        if (e == EPERM || e == EXDEV || e == EMLINK || e == ENOTSUP) {  // a file system without hard links
            if (::renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, cand.c_str(), RENAME_NOREPLACE) == 0) return cand;
            if (errno == EEXIST) continue;
            e = errno;
        }
        throw Error("cannot set '" + path + "' aside as '" + cand + "': " + std::strerror(e));
    }
    throw Error("cannot set '" + path + "' aside: 999 set-asides of this second exist already");
}

void guard_standard_fds() {
    for (int fd = 0; fd <= 2; fd++) {
        if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        // the lowest free descriptor: this one, as those below it are open
        int got = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (got >= 0 && got != fd) ::close(got);
    }
}

std::string read_file(const std::string& path, const std::string& what, size_t limit) {
    auto fail = [&](int e) {
        return Error("cannot read " + what + " '" + path + "': " + std::strerror(e) +
                     (e == EACCES ? " (check its permissions)" : ""));
    };
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw fail(errno);
    std::string out;
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)  // one allocation for a file of known size
        out.reserve(size_t(std::min<uint64_t>(uint64_t(st.st_size), uint64_t(limit) + 1)));
    char buf[1 << 16];
    while (out.size() <= limit) {
        ssize_t n = ::read(fd, buf, std::min(sizeof buf, limit + 1 - out.size()));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int e = errno;
            ::close(fd);
            throw fail(e);
        }
        if (n == 0) break;
        out.append(buf, size_t(n));
    }
    ::close(fd);
    return out;
}

}  // namespace attn
