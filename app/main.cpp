// attnlab: entry point. Parses flags, then runs the headless trainer (the window comes with the desktop app).
#include <cstdio>
#include <exception>

#include "cli.h"
#include "headless.h"
#include "vk/context.h"

int main(int argc, char** argv) {
    attn::RunOptions o;
    int rc = attn::parse_cli(argc, argv, o);
    if (rc >= 0) return rc;
    try {
        if (o.list_devices) {
            auto devs = attn::Context::list_devices();
            for (size_t i = 0; i < devs.size(); i++)
                std::printf("%zu: %s (%.1f GiB)\n", i, devs[i].name.c_str(), devs[i].memory_bytes / 1073741824.0);
            return 0;
        }
        return attn::run_headless(o);
    } catch (const attn::Error& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: unexpected failure: %s\n", e.what());
        return 1;
    }
}
