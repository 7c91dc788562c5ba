# Sourced by the window tests that drive the real app (BIN and CORPUS set): the Xvfb session around them.
#
# window_session SECONDS "EXTRA TOOLS" 'BODY': BODY runs in bash under xvfb-run with openbox (started and ready: it
# has claimed the screen), at most SECONDS, in a fresh temporary folder (removed after), with window_driver.sh
# sourced; the exit code is BODY's.
# window_run SECONDS ARGS...: attnlab ARGS... alone under xvfb-run (no window manager: runs that end by themselves,
# --exit-after-steps), at most SECONDS; its exit code.
# Both exit 77 (skip) when a tool they need, or one of EXTRA TOOLS, is missing.
need_tools() {
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || {
            echo "SKIP: $tool is not installed (apt-get install xvfb xauth openbox xdotool x11-utils imagemagick)"
            exit 77
        }
    done
}

window_run() {
    local seconds=$1
    shift
    need_tools xvfb-run
    timeout "$seconds" xvfb-run -a -s "-screen 0 1280x800x24" "$BIN" "$@"
}

window_session() {
    local seconds=$1 tools=$2 body=$3
    # shellcheck disable=SC2086
    need_tools xvfb-run openbox xdotool xprop $tools
    BIN=$(realpath "$BIN")
    CORPUS=$(realpath "$CORPUS")
    DRIVER=$(realpath "$(dirname "${BASH_SOURCE[0]}")/window_driver.sh")
    export BIN CORPUS DRIVER
    timeout "$seconds" xvfb-run -a -s "-screen 0 1280x800x24" bash -c '
    set -u
    openbox >/dev/null 2>&1 &
    # ready once it has set the root window'"'"'s _NET_SUPPORTING_WM_CHECK (EWMH): windows mapped before that get no
    # frame and take no Alt+F4
    for ((i = 0; i < 300; i++)); do
        xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null | grep -q "window id" && break
        sleep 0.1
    done
    xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null | grep -q "window id" || { echo "FAIL: openbox did not start"; exit 1; }
    work=$(mktemp -d)
    trap "rm -rf \"$work\"" EXIT
    cd "$work"
    . "$DRIVER"
'"$body"
}
