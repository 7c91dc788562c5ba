// attnlab: entry point. `attnlab lab NAME` prints a demo, `attnlab inspect FILE` a checkpoint's attention; otherwise
// the window or, with --headless, the terminal trainer.
#include <cstdio>
#include <cstring>
#include <string>

#include "cli.h"
#include "headless.h"
#include "inspect_cli.h"
#include "io/files.h"
#include "lab_cli.h"
#include "import_cli.h"
#include "tokenize_cli.h"
#include "window_app.h"
#include "vk/context.h"

#ifdef ATTN_SANITIZE
// As in tests/main.cpp: LeakSanitizer checks at exit, after the Vulkan loader has unloaded the driver, and what the
// driver still holds in its globals would look leaked from "<unknown module>". In the sanitizer build no library is
// unloaded, so that memory stays reachable and leaks of our own code are still reported with their stacks.
extern "C" int dlclose(void*) { return 0; }
#endif

int main(int argc, char** argv) {
    // a closed stdin/stdout/stderr would be the next file opened: a checkpoint that then receives messages
    attn::guard_standard_fds();
    // `attnlab lab NAME`: the lecture's demonstrations as plain text
    if (argc > 1 && std::strcmp(argv[1], "lab") == 0) return attn::run_lab_command(argc - 1, argv + 1);
    // `attnlab inspect FILE`: a checkpoint's probe, attention and predictions as text
    if (argc > 1 && std::strcmp(argv[1], "inspect") == 0) return attn::run_inspect_command(argc - 1, argv + 1);
    // `attnlab import nanogpt|gpt2|llmc FILE -o RUN` / `attnlab export nanogpt|llmc RUN -o OUT`: runs in and out
    if (argc > 1 && (std::strcmp(argv[1], "import") == 0 || std::strcmp(argv[1], "export") == 0))
        return attn::run_import_command(argc - 1, argv + 1);
    // `attnlab tokenize TOKENIZER TEXT`: the ids a tokenizer gives a text
    if (argc > 1 && std::strcmp(argv[1], "tokenize") == 0) return attn::run_tokenize_command(argc - 1, argv + 1);
    attn::RunOptions o;
    int rc = attn::parse_cli(argc, argv, o);
    if (rc >= 0) return rc;
    // what a failure names: "not enough memory for the run on corpus 'x.txt'" / "cannot read the run resumed from …"
    std::string what = o.resume_path.empty() ? "the run on corpus '" + o.data_path + "'"
                                             : "the run resumed from '" + o.resume_path + "'";
    return attn::run_command(what, [&] {
        if (o.list_devices) {
            auto devs = attn::Context::list_devices();
            for (size_t i = 0; i < devs.size(); i++)
                std::printf("%zu: %s (%.1f GiB)\n", i, devs[i].name.c_str(), devs[i].memory_bytes / 1073741824.0);
            return 0;
        }
        return o.headless ? attn::run_headless(o) : attn::run_window(o);
    });
}
