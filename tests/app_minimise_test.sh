#!/usr/bin/env bash
# A minimised window neither crashes nor spins a core: under Xvfb with a window manager (openbox), training is
# paused (Space) so only the UI costs CPU; iconified, the whole process must then stay nearly idle, and after
# it is restored the app must be alive and drawing again (an F12 screenshot comes back).
# Usage: app_minimise_test.sh ATTNLAB CORPUS  (0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
for tool in xvfb-run openbox xdotool; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (apt-get install xvfb openbox xdotool)"; exit 77; }
done
BIN=$(realpath "$BIN"); CORPUS=$(realpath "$CORPUS")
export BIN CORPUS
timeout 300 xvfb-run -a -s "-screen 0 1280x800x24" bash -c '
    set -u
    openbox >/dev/null 2>&1 &
    sleep 1
    work=$(mktemp -d)
    trap "rm -rf \"$work\"" EXIT
    cd "$work"   # the app may autosave into the folder it runs in
    "$BIN" --data "$CORPUS" --preset bigram --max-iters 100000000 >"$work/out" 2>&1 &
    pid=$!
    wid=$(timeout 60 xdotool search --sync --onlyvisible --pid "$pid" --name "Attention Lab" | head -1)
    [ -n "$wid" ] || { echo "FAIL: no window appeared"; cat "$work/out"; kill "$pid"; exit 1; }
    sleep 3
    xdotool key --window "$wid" space   # pause training: what is left is the UI
    sleep 2
    ticks() { awk "{print \$14 + \$15}" "/proc/$pid/stat"; }   # the whole process: utime + stime
    hz=$(getconf CLK_TCK)
    a=$(ticks); sleep 4; b=$(ticks)
    visible=$(( (b - a) * 100 / (4 * hz) ))
    xdotool windowminimize --sync "$wid"
    sleep 2
    a=$(ticks); sleep 6; b=$(ticks)
    minimised=$(( (b - a) * 100 / (6 * hz) ))
    kill -0 "$pid" 2>/dev/null || { echo "FAIL: attnlab died while minimised"; cat "$work/out"; exit 1; }
    xdotool windowmap --sync "$wid"; xdotool windowactivate "$wid" 2>/dev/null
    kill -0 "$pid" 2>/dev/null || { echo "FAIL: attnlab died after being restored"; cat "$work/out"; exit 1; }
    # drawing again: F12 is taken in and its screenshot written by a frame (a paused window draws at ~1-2% of a
    # core, too few clock ticks to tell from the minimised ~0% reliably)
    xdotool key --window "$wid" F12
    drew=0
    for ((i = 0; i < 200; i++)); do
        ls "$work"/attnlab_step*.png >/dev/null 2>&1 && { drew=1; break; }
        sleep 0.1
    done
    kill "$pid"; wait "$pid" 2>/dev/null
    echo "attnlab CPU while paused: visible ${visible}%, minimised ${minimised}%"
    [ "$minimised" -le 5 ] || { echo "FAIL: the minimised window spins (${minimised}% of a core)"; cat "$work/out"; exit 1; }
    [ "$drew" = 1 ] || { echo "FAIL: the restored window does not draw again (no F12 screenshot within 20 s)"; cat "$work/out"; exit 1; }
    echo PASS
'
