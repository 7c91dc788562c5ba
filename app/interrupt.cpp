// The stop request from a signal: a flag the loops poll, and one line (write(2): async-signal-safe) to say it was seen.
#include "interrupt.h"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <unistd.h>

namespace attn {

static volatile std::sig_atomic_t g_signal = 0;
static char g_line[160];
static size_t g_line_len = 0;

static void on_signal(int sig) {
    if (g_signal == 0) g_signal = sig;
    if (g_line_len > 0) {
        ssize_t n = write(STDERR_FILENO, g_line, g_line_len);
        (void)n;
    }
}

void install_interrupt_handlers(const char* what) {
    std::snprintf(g_line, sizeof g_line, "\nattnlab: %s (Ctrl+C again quits at once)\n", what);
    g_line_len = std::strlen(g_line);
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_RESETHAND;  // the second signal takes the default action: quit at once
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

int interrupt_signal() { return g_signal; }

const char* interrupt_name(int sig) {
    switch (sig) {
        case SIGINT: return "SIGINT";
        case SIGTERM: return "SIGTERM";
        case SIGHUP: return "SIGHUP";
        default: return "a signal";
    }
}

}  // namespace attn
