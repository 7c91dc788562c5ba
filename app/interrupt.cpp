// The stop request from a signal: a flag the loops poll, and one line (write(2): async-signal-safe) to say it was seen.
#include "interrupt.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <unistd.h>

namespace attn {

static std::atomic<int> g_signal{0};  // lock-free: set by a handler on whichever thread, read by the loops
static_assert(std::atomic<int>::is_always_lock_free);
static char g_line[160];
static size_t g_line_len = 0;

static void on_signal(int sig) {
    int saved_errno = errno;
    int first = 0;
    if (g_signal.compare_exchange_strong(first, sig)) {
        ssize_t n = write(STDERR_FILENO, g_line, g_line_len);
        (void)n;
    } else if (sig == SIGINT) {
        _exit(128 + SIGINT);  // Ctrl+C again: quit at once (a closing terminal's repeated SIGHUP does not)
    }
    errno = saved_errno;
}

void install_interrupt_handlers(const char* what) {
    std::snprintf(g_line, sizeof g_line, "\nattnlab: %s (Ctrl+C again quits at once)\n", what);
    g_line_len = std::strlen(g_line);
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    // SIGPIPE too: a reader that went away (`attnlab | tee log`: Ctrl+C kills tee as well) stops the run cleanly
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
        struct sigaction old;
        // a signal ignored on entry stays ignored: `nohup` (SIGHUP), background jobs of a script (SIGINT)
        if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(sig, &sa, nullptr);
    }
}

int interrupt_signal() { return g_signal.load(); }

const char* interrupt_name(int sig) {
    switch (sig) {
        case SIGINT: return "SIGINT";
        case SIGTERM: return "SIGTERM";
        case SIGHUP: return "SIGHUP";
        case SIGPIPE: return "SIGPIPE (the output's reader went away)";
        default: return "a signal";
    }
}

}  // namespace attn
