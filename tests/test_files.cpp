// io/files.h: the one place that decides whether a path may be written. No GPU needed.
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "io/files.h"
#include "vk/check.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {
// A fresh folder for one test case, removed after it (and the roles it registered forgotten).
struct Scratch {
    fs::path dir;
    explicit Scratch(const std::string& name) : dir(fs::temp_directory_path() / ("attnlab_files_" + name + "_" + std::to_string(getpid()))) {
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    ~Scratch() {
        forget_files("the corpus");
        forget_files("the checkpoint");
        forget_files("the --metrics file");
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    std::string at(const std::string& name) const { return (dir / name).string(); }
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(at(name), std::ios::binary) << text;
        return at(name);
    }
    int temps() const {  // temporary files of ours left in the folder
        int n = 0;
        for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().rfind(".attnlab-", 0) == 0;
        return n;
    }
};

std::string read(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("no writer writes over the corpus, through symlinks, hard links or ../", "[files]") {
    Scratch s("corpus");
    std::string corpus = s.write("c.txt", "First Citizen:\n");
    register_file("the corpus", corpus);
    fs::create_directories(s.at("sub"));
    fs::create_symlink(corpus, s.at("link.safetensors"));
    fs::create_hard_link(corpus, s.at("hard.safetensors"));
    for (const std::string& p : {corpus, s.at("link.safetensors"), s.at("hard.safetensors"), s.at("sub/../c.txt")}) {
        CHECK_THAT(error_of([&] { write_file_atomic(p, "the checkpoint", "not text"); }), Catch::Contains("it is the corpus"));
        CHECK_THAT(write_problem(p, "the screenshot"), Catch::Contains("it is the corpus"));
    }
    CHECK(read(corpus) == "First Citizen:\n");
    CHECK(s.temps() == 0);
    // a file of another role is refused too; one of the same role is the writer's own
    register_file("the checkpoint", s.at("run.safetensors"));
    CHECK_THAT(write_problem(s.at("./run.safetensors"), "the --metrics file"), Catch::Contains("it is the checkpoint"));
    CHECK(write_problem(s.at("run.safetensors"), "the checkpoint").empty());
    write_file_atomic(s.at("run.safetensors"), "the checkpoint", "ok");
    CHECK(read(s.at("run.safetensors")) == "ok");
    forget_files("the corpus");
    CHECK(write_problem(corpus, "the checkpoint").empty());
}

TEST_CASE("a file is replaced only by what was written, read back", "[files]") {
    Scratch s("readback");
    std::string path = s.write("ck.safetensors", "the good run");
    // something else writes into the temporary file while it is filled (a signal handler's message into an fd
    // that was stderr): the check catches it and the good file stays
    std::string err = error_of([&] {
        write_file_atomic(path, "the checkpoint", [&](FileSink& out) {
            out.put(std::string(1000, 'x'));
            for (const auto& e : fs::directory_iterator(s.dir))
                if (e.path().filename().string().rfind(".attnlab-", 0) == 0)
                    std::ofstream(e.path(), std::ios::app) << "\nattnlab: stopping after the batch under way\n";
        });
    });
    CHECK_THAT(err, Catch::Contains("something else wrote into it") && Catch::Contains("the file there is untouched"));
    CHECK(read(path) == "the good run");
    CHECK(s.temps() == 0);
    write_file_atomic(path, "the checkpoint", "the next run");
    CHECK(read(path) == "the next run");
}

TEST_CASE("a write that fails (a full disk) leaves the old file and says what happened", "[files]") {
    Scratch s("full");
    std::string path = s.write("old.csv", "step\n1\n");
    // a file size limit: writes past 4 KiB fail with EFBIG, as on a full disk (SIGXFSZ ignored, as a shell would)
    struct rlimit old_lim;
    getrlimit(RLIMIT_FSIZE, &old_lim);
    auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = old_lim;
    lim.rlim_cur = 4096;
    setrlimit(RLIMIT_FSIZE, &lim);
    std::string big(10000, 'y');
    std::string err = error_of([&] { write_file_atomic(path, "the loss CSV", big); });
    std::string err_new = error_of([&] { write_file_atomic(s.at("new.png"), "the screenshot", big); });
    setrlimit(RLIMIT_FSIZE, &old_lim);
    std::signal(SIGXFSZ, old_handler);
    CHECK_THAT(err, Catch::Contains("cannot write the loss CSV") && Catch::Contains("the file there is untouched"));
    CHECK(read(path) == "step\n1\n");
    CHECK_THAT(err_new, Catch::Contains("nothing was written"));
    CHECK_THAT(err_new, !Catch::Contains("untouched"));
    CHECK(!fs::exists(s.at("new.png")));
    CHECK(s.temps() == 0);
    CHECK_THAT(error_of([&] { write_file_atomic(s.at("no/such/dir/x.csv"), "the loss CSV", "a"); }),
               Catch::Contains("check the folder exists") && Catch::Contains("nothing was written"));
}

TEST_CASE("a name of 252 characters is written (the temporary name is short)", "[files]") {
    Scratch s("long");
    std::string name = std::string(252 - 12, 'n') + ".safetensors";
    REQUIRE(name.size() == 252);
    write_file_atomic(s.at(name), "the checkpoint", "ok");
    CHECK(read(s.at(name)) == "ok");
    CHECK(s.temps() == 0);
}

TEST_CASE("a killed writer's temporary file is removed at the next write to that path", "[files]") {
    Scratch s("killed");
    std::string path = s.at("ck.safetensors");
    std::fflush(nullptr);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {  // killed half-way through a save, as by SIGKILL
        write_file_atomic(path, "the checkpoint", [&](FileSink& out) {
            out.put(std::string(5000, 'z'));
            ::kill(::getpid(), SIGKILL);
        });
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFSIGNALED(status));
    REQUIRE(s.temps() == 1);
    CHECK(!fs::exists(path));
    write_file_atomic(s.at("other.csv"), "the loss CSV", "x");  // another path's write leaves it (not its own)
    CHECK(s.temps() == 1);
    write_file_atomic(path, "the checkpoint", "complete");
    CHECK(s.temps() == 0);
    CHECK(read(path) == "complete");
}

TEST_CASE("files set aside in the same second keep distinct names", "[files]") {
    Scratch s("aside");
    std::string path = s.at("attnlab_autosave.safetensors");
    std::vector<std::string> kept;
    for (int i = 0; i < 3; i++) {
        std::ofstream(path) << "run " << i;
        kept.push_back(set_aside(path));
        CHECK(!fs::exists(path));
    }
    REQUIRE(kept.size() == 3);
    CHECK(kept[0] != kept[1]);
    CHECK(kept[1] != kept[2]);
    CHECK(kept[0] != kept[2]);
    for (int i = 0; i < 3; i++) {
        CHECK(read(kept[i]) == "run " + std::to_string(i));
        CHECK_THAT(kept[i], Catch::Contains("attnlab_autosave.set-aside-") && Catch::EndsWith(".safetensors"));
    }
    CHECK_THAT(error_of([&] { set_aside(s.at("missing.safetensors")); }), Catch::Contains("cannot set"));
}

TEST_CASE("a closed stderr is reopened on /dev/null, so no file opened later becomes it", "[files]") {
    std::fflush(nullptr);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(2);
        guard_standard_fds();
        int fd = ::open("/dev/null", O_RDONLY);  // a checkpoint's temporary file, say
        _exit(fd == 2 ? 1 : 0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}
