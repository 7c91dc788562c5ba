#!/usr/bin/env bash
# The Attention panel's probe view (Xvfb + openbox + xdotool): a headless run's checkpoint, opened in the window with
# Ctrl+O, shows its time-lapse; the timeline's first step (step 0) has rows near uniform, the latest sharper ones
# (the screenshot's cells); the loss plot's cursor follows the scrubbed step (Right, Play, a click on the plot); the live
# run records too; "training batch" brings the batch back. Where things are and
# which step is shown come from the layout sidecar of F12 (ATTN_SHOT_LAYOUT=1).
# Usage: app_timelapse_test.sh ATTNLAB CORPUS  (0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
. "$(dirname "$0")/window_session.sh"
window_session 300 "convert" '
    export ATTN_SHOT_LAYOUT=1
    "$BIN" --headless --quiet --data "$CORPUS" --preset single-head --max-iters 2000 --eval-iters 5 --sample-chars 100 \
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
    for ((try = 0; try < 25; try++)); do new_layout; [ "$(layout_field heatmap 5)" = 5 ] && break; sleep 0.2; done
    [ "$(layout_field heatmap 5)" = 5 ] || fail "the probe view should show the 5 characters of \"to be\" (layout: $(grep heatmap layout))"
    last=$(layout_field probe_step 1)
    [ "$last" = 2000 ] || fail "live, the probe view should show the latest snapshot, step 2000 (shows $last)"
    s_last=$(row_spread 5)
    click_on timeline_first
    # the training thread shows the step at a later frame; a click lost between two frames is made again
    for ((try = 0; try < 10; try++)); do
        new_layout
        [ "$(layout_field probe_step 1)" = 0 ] && break
        [ "$try" = 4 ] && click_on timeline_first
    done
    first=$(layout_field probe_step 1)
    [ "$first" = 0 ] || fail "|< should show step 0 (shows $first)"
    s_first=$(row_spread 5)
    echo "last row colour spread: step 0 $s_first, step $last $s_last"
    [ "$s_first" -lt "$s_last" ] || fail "step 0 should be nearer uniform than step $last"
    # the loss plot'"'"'s cursor is at the scrubbed step: step 0 at the plot'"'"'s left edge
    lx=$(layout_field loss 1) lw=$(layout_field loss 3)
    c0=$(layout_field loss_cursor 1)
    [ "$c0" -ge "$((lx - 1))" ] && [ "$c0" -le "$((lx + 2))" ] || fail "at step 0 the loss cursor should be at x $lx (is $c0)"
    # Right: the next recorded step
    key Right
    for ((try = 0; try < 10; try++)); do
        new_layout
        [ "$(layout_field probe_step 1)" = 1 ] && break
        [ "$try" = 4 ] && [ "$(layout_field probe_step 1)" = 0 ] && key Right  # a key lost between two frames: again
    done
    [ "$(layout_field probe_step 1)" = 1 ] || fail "Right after step 0 should show step 1 (shows $(layout_field probe_step 1))"
    # Play: the snapshots follow one another to the last, the cursor with them
    click_on play_button
    sleep 3  # about 12 recorded steps at 4 a second: past step 25, a few pixels along the plot
    new_layout
    mid=$(layout_field probe_step 1) cmid=$(layout_field loss_cursor 1)
    [ "$mid" -gt 1 ] && [ "$mid" -lt 2000 ] || fail "3 s after Play the time-lapse should be part-way (shows step $mid)"
    [ "$cmid" -gt "$c0" ] || fail "the loss cursor did not move with Play (x $c0, then $cmid)"
    for ((try = 0; try < 40; try++)); do new_layout; [ "$(layout_field probe_step 1)" = 2000 ] && break; sleep 0.5; done
    [ "$(layout_field probe_step 1)" = 2000 ] || fail "Play should end at the last snapshot, step 2000 (shows $(layout_field probe_step 1))"
    cend=$(layout_field loss_cursor 1)
    [ "$cend" -ge "$((lx + lw - 3))" ] || fail "at step 2000 the loss cursor should be at the plot'"'"'s right edge ($((lx + lw))), is at $cend"
    echo "Play: step $mid after 3 s (cursor x $cmid), then step 2000 (cursor x $cend)"
    # a click on the loss plot'"'"'s middle: the recorded step nearest step 1000
    ly=$(layout_field loss 2) lh=$(layout_field loss 4)
    xdotool mousemove --window "$wid" $((lx + lw / 2)) $((ly + lh / 2)) click 1
    for ((try = 0; try < 10; try++)); do new_layout; [ "$(layout_field probe_step 1)" != 2000 ] && break; done
    jumped=$(layout_field probe_step 1)
    [ "$jumped" -ge 500 ] && [ "$jumped" -le 1500 ] || fail "a click on the loss plot'"'"'s middle should show a step near 1000 (shows $jumped)"
    echo "a click on the loss plot at step ~1000 shows step $jumped"
    # the Samples panel at a scrubbed step: a sample computed from that step'"'"'s weights (one seed at every step)
    shown() { awk "\$1 == \"samples_shown\" { print \$$1 }" layout; }
    for ((try = 0; try < 20; try++)); do new_layout; [ "$(shown 2)" = "$jumped" ] && break; done
    [ "$(shown 2)" = "$jumped" ] || fail "Samples at step $jumped: shows the sample of step $(shown 2)"
    h_mid=$(shown 3)
    click_on timeline_first
    for ((try = 0; try < 20; try++)); do
        new_layout
        [ "$(shown 2)" = 0 ] && break
        # a click lost between two frames (the timeline still at the step before) is made again
        [ "$try" = 9 ] && [ "$(layout_field probe_step 1)" != 0 ] && click_on timeline_first
    done
    [ "$(shown 2)" = 0 ] ||
        fail "Samples at step 0: shows the sample of step $(shown 2) (the timeline at step $(layout_field probe_step 1))"
    [ "$(shown 3)" != "$h_mid" ] || fail "the samples at steps 0 and $jumped are the same text"
    echo "Samples: step 0 and step $jumped sampled from their own weights, different texts"
    xdotool mousemove --window "$wid" $((lx + lw / 2)) $((ly + lh / 2)) click 1   # back to step ~1000
    for ((try = 0; try < 20; try++)); do new_layout; [ "$(layout_field probe_step 1)" = "$jumped" ] && break; done
    # another probe typed into its field: its views at every recorded step at once (the run is paused)
    frame_seen() { shot_step >/dev/null || fail "F12 wrote no screenshot"; }
    click_on probe_field
    xdotool keydown --window "$wid" ctrl; xdotool keydown --window "$wid" a   # held over a frame start (ImGui 1.86)
    frame_seen
    xdotool keyup --window "$wid" a; xdotool keyup --window "$wid" ctrl
    xdotool type --window "$wid" --delay 20 "be~"   # ~: not in the corpus, kept in place and said so beside the field
    frame_seen
    xdotool keydown --window "$wid" Return; frame_seen; xdotool keyup --window "$wid" Return
    for ((try = 0; try < 20; try++)); do new_layout; [ "$(layout_field heatmap 5)" = 3 ] && break; done
    [ "$(layout_field heatmap 5)" = 3 ] || fail "the probe \"be~\" typed: want a map of 3 (layout: $(grep heatmap layout))"
    [ "$(layout_field probe_note 3)" -gt 0 ] || fail "the unknown ~ is not said beside the probe field"
    [ "$(layout_field legend_clipped 1)" = 0 ] || fail "the heatmap legend is cut off (layout: $(grep legend layout))"
    [ "$(layout_field probe_step 1)" = "$jumped" ] ||
        fail "the new probe: want the scrubbed step $jumped still shown (shows $(layout_field probe_step 1))"
    # its timeline is the whole run: computed from the weights recorded at every step, step 0 included
    click_on timeline_first
    for ((try = 0; try < 10; try++)); do new_layout; [ "$(layout_field probe_step 1)" = 0 ] && break; done
    [ "$(layout_field probe_step 1)" = 0 ] || fail "the new probe: |< should show step 0 (shows $(layout_field probe_step 1))"
    click_on batch_button
    new_layout
    [ "$(layout_field probe_step 1)" = -1 ] || fail "training batch: the probe is still shown"
    [ "$(layout_field heatmap 5)" = 8 ] || fail "training batch: want the block of 8"
    # slow motion: a cap of 4 steps a second, then training: a few steps in 3 s, not hundreds
    type_into steps_cap_field 4
    xdotool keydown --window "$wid" Return; frame_seen; xdotool keyup --window "$wid" Return
    resume
    s0=$(shot_step) || fail "F12 wrote no screenshot"
    sleep 3
    s1=$(shot_step) || fail "F12 wrote no screenshot"
    pause
    echo "slow motion at 4 steps/s: steps $s0 to $s1 in about 3 s"
    [ $((s1 - s0)) -ge 4 ] && [ $((s1 - s0)) -le 20 ] || fail "at 4 steps/s, 3 s trained $((s1 - s0)) steps"
    close_window
    n=$(grep -c "\[validation\]" app.out); [ "$n" -eq 0 ] || fail "$n validation message(s)"
    echo PASS
'
