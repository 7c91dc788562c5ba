#!/usr/bin/env bash
# Key taps shorter than a frame reach the text fields (Xvfb + openbox + xdotool): at 4 frames a second, a quick
# Ctrl+A, "64" and a quick Return in the batch size field apply batch 64 (the checkpoint Ctrl+S writes says so);
# Dear ImGui 1.86 reads keys held at a frame start, so without the app's queue the Return was lost, the field stayed
# focused and the value unapplied.
# Usage: app_keys_test.sh ATTNLAB CORPUS  (0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
. "$(dirname "$0")/window_session.sh"
window_session 300 "" '
    export ATTN_SHOT_LAYOUT=1   # F12 also writes where the widgets are
    start app.out --checkpoint "$work/keys.safetensors" --autosave 0 --fps 4 --save-cpu off
    wait_steps 2 || fail "the window did not train"
    new_layout
    read -r x y w h <<<"$(layout_field batch_field 1) $(layout_field batch_field 2) $(layout_field batch_field 3) $(layout_field batch_field 4)"
    [ "${w:-0}" -gt 0 ] || fail "the batch size field is not in view (layout: $(grep "^batch_field" layout))"
    xdotool mousemove --window "$wid" $((x + 12)) $((y + h / 2)) click 1
    sleep 0.6
    xdotool key --window "$wid" --delay 0 ctrl+a   # press and release within a few milliseconds: inside one frame
    sleep 0.6
    xdotool type --window "$wid" --delay 0 64
    sleep 0.6
    xdotool key --window "$wid" --delay 0 Return
    sleep 0.6
    save_checkpoint app.out
    b=$(checkpoint_setting "$work/keys.safetensors" batch_size)
    [ "$b" = 64 ] || fail "quick Ctrl+A, 64, quick Return at 4 fps: the run trains at batch $b, not 64"
    echo "quick taps at 4 fps: Ctrl+A, 64, Return applied batch 64"
    close_window
    n=$(grep -c "\[validation\]" app.out); [ "$n" -eq 0 ] || fail "$n validation message(s)"
    echo "PASS"
'
