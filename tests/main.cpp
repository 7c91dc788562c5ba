// Catch2 main: one shared Vulkan context with the validation layer on; any validation message fails the run.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <memory>

#include "gpu.h"

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
