# Sourced by the window tests that drive the real app (BIN and CORPUS set): the Xvfb + openbox session around them.
# window_session SECONDS "EXTRA TOOLS" 'BODY': BODY runs in bash under xvfb-run with openbox, at most SECONDS, in a
# fresh temporary folder (removed after), with window_driver.sh sourced; the exit code is BODY's. Exits 77 (skip)
# when xvfb-run, openbox, xdotool or one of EXTRA TOOLS is missing.
window_session() {
    local seconds=$1 tools=$2 body=$3 tool
    for tool in xvfb-run openbox xdotool $tools; do
        command -v "$tool" >/dev/null ||
            { echo "SKIP: $tool is not installed (apt-get install xvfb openbox xdotool imagemagick)"; exit 77; }
    done
    BIN=$(realpath "$BIN")
    CORPUS=$(realpath "$CORPUS")
    DRIVER=$(realpath "$(dirname "${BASH_SOURCE[0]}")/window_driver.sh")
    export BIN CORPUS DRIVER
    timeout "$seconds" xvfb-run -a -s "-screen 0 1280x800x24" bash -c '
    set -u
    openbox >/dev/null 2>&1 &
    sleep 1
    work=$(mktemp -d)
    trap "rm -rf \"$work\"" EXIT
    cd "$work"
    . "$DRIVER"
'"$body"
}
