#!/usr/bin/env bash
# The Attention panel's probe view (Xvfb + openbox + xdotool): a headless run's checkpoint, opened in the window with
# Ctrl+O, shows its time-lapse; the timeline's first step (step 0) has rows near uniform, the latest sharper ones
# (the screenshot's cells); the live run records too; "training batch" brings the batch back. Where things are and
# which step is shown come from the layout sidecar of F12 (ATTN_SHOT_LAYOUT=1).
# Usage: app_timelapse_test.sh ATTNLAB CORPUS  (0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
. "$(dirname "$0")/window_session.sh"
window_session 300 "convert" '
    export ATTN_SHOT_LAYOUT=1
    "$BIN" --headless --quiet --data "$CORPUS" --preset single-head --max-iters 2000 --eval-iters 5 --sample-chars 0 \
        --probe "to be" --save "$work/h.safetensors" >h.out 2>&1 || fail "the headless run failed"
    start app.out --preset single-head --checkpoint "$work/h.safetensors" --autosave 0
    wait_steps 1 || fail "the window did not train"
    key space   # paused: the loaded run stays at step 2000
    for try in 1 2 3; do
        key ctrl+o
        wait_for app.out "^attnlab: loaded $work/h.safetensors at step 2000$" 15 && break
        [ "$try" -lt 3 ] || fail "Ctrl+O: no loaded line"
    done
    new_layout
    click_on probe_button
    new_layout
    [ "$(layout_field heatmap 5)" = 5 ] || fail "the probe view should show the 5 characters of \"to be\" (layout: $(grep heatmap layout))"
    last=$(layout_field probe_step 1)
    [ "$last" = 2000 ] || fail "live, the probe view should show the latest snapshot, step 2000 (shows $last)"
    # the spread of the last row'"'"'s colours: (max - min) of r+g+b over its 5 cells, in the last F12 screenshot
    spread() {
        rm -f attnlab_step*
        key F12
        local i
        for ((i = 0; i < 100; i++)); do ls attnlab_step*.png.layout >/dev/null 2>&1 && break; sleep 0.1; done
        local png x y w h
        png=$(ls attnlab_step*.png | head -1)
        read -r x y w h <<<"$(awk "\$1 == \"heatmap\" { print \$2, \$3, \$4, \$5 }" "$png.layout")"
        for j in 0 1 2 3 4; do   # inside each cell, away from the value written in its middle
            convert "$png" -crop "1x1+$((x + j * w / 5 + 3))+$((y + 4 * h / 5 + 3))" +repage -alpha off txt:- |
                awk "NR == 2 { c = \$2; gsub(/[()]/, \"\", c); split(c, v, \",\"); print v[1] + v[2] + v[3] }"
        done | sort -n | awk "NR == 1 { lo = \$1 } { hi = \$1 } END { print hi - lo }"
    }
    s_last=$(spread)
    click_on timeline_first
    new_layout
    first=$(layout_field probe_step 1)
    [ "$first" = 0 ] || fail "|< should show step 0 (shows $first)"
    s_first=$(spread)
    echo "last row colour spread: step 0 $s_first, step $last $s_last"
    [ "$s_first" -lt "$s_last" ] || fail "step 0 should be nearer uniform than step $last"
    # another probe typed into its field: a new time-lapse, its first snapshot at once (the run is paused)
    frame_seen() { shot_step >/dev/null || fail "F12 wrote no screenshot"; }
    click_on probe_field
    xdotool keydown --window "$wid" ctrl; xdotool keydown --window "$wid" a   # held over a frame start (ImGui 1.86)
    frame_seen
    xdotool keyup --window "$wid" a; xdotool keyup --window "$wid" ctrl
    xdotool type --window "$wid" --delay 20 "be"
    frame_seen
    xdotool keydown --window "$wid" Return; frame_seen; xdotool keyup --window "$wid" Return
    for ((try = 0; try < 20; try++)); do new_layout; [ "$(layout_field heatmap 5)" = 2 ] && break; done
    [ "$(layout_field heatmap 5)" = 2 ] || fail "the probe \"be\" typed: want a map of 2 (layout: $(grep heatmap layout))"
    [ "$(layout_field probe_step 1)" = 2000 ] || fail "the new probe: want its snapshot of step 2000"
    click_on batch_button
    new_layout
    [ "$(layout_field probe_step 1)" = -1 ] || fail "training batch: the probe is still shown"
    [ "$(layout_field heatmap 5)" = 8 ] || fail "training batch: want the block of 8"
    close_window
    n=$(grep -c "\[validation\]" app.out); [ "$n" -eq 0 ] || fail "$n validation message(s)"
    echo PASS
'
