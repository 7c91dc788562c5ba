#!/usr/bin/env bash
# A minimised window neither crashes nor spins a core: under Xvfb with a window manager (openbox), training is
# paused (Space) so only the UI costs CPU; iconified, the whole process must then stay nearly idle, and after
# it is restored the app must be alive and drawing again (an F12 screenshot comes back).
# Usage: app_minimise_test.sh ATTNLAB CORPUS  (0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
. "$(dirname "$0")/window_session.sh"
window_session 300 "" '
    start app.out --autosave 0
    wait_steps 5 || fail "the window did not train"
    pause   # what is left is the UI
    ticks() { awk "{print \$14 + \$15}" "/proc/$pid/stat"; }   # the whole process: utime + stime
    hz=$(getconf CLK_TCK)
    a=$(ticks); sleep 4; b=$(ticks)   # measured over 4 s
    visible=$(( (b - a) * 100 / (4 * hz) ))
    xdotool windowminimize --sync "$wid"
    sleep 2   # the frame under way ends; then measured over 6 s
    a=$(ticks); sleep 6; b=$(ticks)
    minimised=$(( (b - a) * 100 / (6 * hz) ))
    kill -0 "$pid" 2>/dev/null || fail "attnlab died while minimised"
    xdotool windowmap --sync "$wid"; xdotool windowactivate "$wid" 2>/dev/null
    kill -0 "$pid" 2>/dev/null || fail "attnlab died after being restored"
    echo "attnlab CPU while paused: visible ${visible}%, minimised ${minimised}%"
    [ "$minimised" -le 5 ] || fail "the minimised window spins (${minimised}% of a core)"
    # drawing again: F12 is taken in and its screenshot written by a frame (a paused window draws at ~1-2% of a
    # core, too few clock ticks to tell from the minimised ~0% reliably)
    shot_step >/dev/null || fail "the restored window does not draw again (no F12 screenshot within 10 s)"
    close_window
    echo PASS
'
