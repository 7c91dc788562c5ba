// The stop request from a signal: a flag the loops poll, and one line (write(2): async-signal-safe) to say it was seen.
#include "interrupt.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <initializer_list>
#include <unistd.h>

namespace attn {

static std::atomic<int> g_signal{0};  // lock-free: set by a handler on whichever thread, read by the loops
static_assert(std::atomic<int>::is_always_lock_free);
// the line the first signal prints: two buffers, the one in use named by g_line_now, so that set_interrupt_message
// never changes the text a handler may be writing (safe for one change after the handlers are installed, all the
// headless run makes: a second would rewrite the buffer the first left to a handler)
static char g_line[2][512];
static size_t g_line_len[2] = {0, 0};
static std::atomic<int> g_line_now{0};
static std::atomic<long long> g_first_ns{0};  // when the first signal arrived (CLOCK_MONOTONIC), 0 until known
static_assert(std::atomic<long long>::is_always_lock_free);
// A second SIGINT this soon after the first is the same Ctrl+C delivered twice (`timeout -s INT` signals the process
// and then its group; a terminal signals every process of the foreground group), not a second press
constexpr long long k_repeat_ns = 500'000'000;

static long long now_ns() {
    timespec ts;  // clock_gettime is async-signal-safe
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1'000'000'000 + ts.tv_nsec;
}

static void on_signal(int sig) {
    int saved_errno = errno;
    int first = 0;
    if (g_signal.compare_exchange_strong(first, sig)) {
        g_first_ns.store(now_ns());
        int k = g_line_now.load();
        ssize_t n = write(STDERR_FILENO, g_line[k], g_line_len[k]);
        // only a Ctrl+C can be pressed again (a kill's SIGTERM, a closed terminal's SIGHUP cannot)
        static const char again[] = " (Ctrl+C again quits at once)\n";
        if (sig == SIGINT) n = write(STDERR_FILENO, again, sizeof again - 1);
        else n = write(STDERR_FILENO, "\n", 1);
        (void)n;
    } else if (sig == SIGINT) {
        // Ctrl+C again: quit at once (a closing terminal's repeated SIGHUP does not), unless it is the first one again
        long long t0 = g_first_ns.load();
        if (t0 != 0 && now_ns() - t0 >= k_repeat_ns) {
            static const char quit[] = "\nattnlab: quitting at once (Ctrl+C again); nothing more saved\n";
            ssize_t n = write(STDERR_FILENO, quit, sizeof quit - 1);
            (void)n;
            _exit(128 + SIGINT);
        }
    }
    errno = saved_errno;
}

void set_interrupt_message(const char* what) {
    int k = 1 - g_line_now.load();
    std::snprintf(g_line[k], sizeof g_line[k], "\nattnlab: %s", what);  // the handler ends the line
    g_line_len[k] = std::strlen(g_line[k]);
    g_line_now.store(k);
}

void install_interrupt_handlers(const char* what) {
    set_interrupt_message(what);
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
