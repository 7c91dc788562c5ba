// Catch2 main: one shared Vulkan context with the validation layer on; any validation message fails the run.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <memory>

#include "gpu.h"
#include "train/trainer.h"

#ifdef ATTN_SANITIZE
// LeakSanitizer checks at exit, after the Vulkan loader has unloaded the driver: what a driver still holds in its
// globals then looks leaked from "<unknown module>", with no stack to read (lavapipe on a Zen 4 host: 128 bytes
// from realloc, in every suite that creates a device; none on the Intel and earlier AMD hosts). In the sanitizer build
// no library is unloaded, so such memory stays reachable, and leaks of our own code are still reported with stacks.
extern "C" int dlclose(void*) { return 0; }
#endif

namespace {
std::unique_ptr<attn::Context> g_ctx;  // the suite's one device, like a fixture shared by every test
std::unique_ptr<attn::KernelCache> g_kernels;
}  // namespace

namespace test {
attn::Context& ctx() {
    if (!g_ctx) {
        attn::ContextOptions o;
        o.validation = true;
        o.quiet = true;
        g_ctx = std::make_unique<attn::Context>(o);
        g_kernels = std::make_unique<attn::KernelCache>(*g_ctx);
    }
    return *g_ctx;
}
attn::KernelCache& kernels() {
    ctx();
    return *g_kernels;
}
}  // namespace test

int main(int argc, char** argv) {
    // no trainer re-records its step because the host was slow for two steps (under the sanitizers, on a busy
    // 2-core host, it happened): the tests of that set their own limits
    attn::Trainer::set_default_submit_limits(1e9, 1e9);
    int rc = Catch::Session().run(argc, argv);
    uint64_t messages = g_ctx ? g_ctx->validation_messages() : 0;
    g_kernels.reset();
    g_ctx.reset();
    if (messages > 0) {
        std::fprintf(stderr, "FAILED: the Vulkan validation layer reported %llu message(s)\n", (unsigned long long)messages);
        return 1;
    }
    return rc;
}
