#!/usr/bin/env bash
# A probe typed after a live run (Xvfb + openbox + xdotool): the window trains single-head to its end, then a new probe
# typed into the Attention panel gets its views at every recorded step from the weights recorded there: at step 0 its
# last row is near uniform, at the end peaked (the screenshot's cells), and the Samples panel's text at step 0 differs
# from the one at the end (and once the run ends, Samples shows text of its last weights); the Heads view's scores
# differ between the two steps, knocking the head out gives a validation loss, and coloured by importance the trained
# head matters. Where things are and which step is shown come from F12's layout sidecar.
# Usage: app_timelapse_live_test.sh ATTNLAB CORPUS  (0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
. "$(dirname "$0")/window_session.sh"
window_session 300 "convert" '
    export ATTN_SHOT_LAYOUT=1
    start app.out --preset single-head --max-iters 1000 --eval-iters 5 --sample-chars 80 --autosave 0
    wait_steps 1000 || fail "the window did not train to step 1000"
    # paused at max iters, the Samples panel shows text of the last weights (not an earlier refresh'"'"'s)
    shown() { awk "\$1 == \"samples_shown\" { print \$$1 }" layout; }
    for ((try = 0; try < 20; try++)); do new_layout; [ "$(shown 2)" = 1000 ] && break; sleep 0.2; done
    [ "$(shown 2)" = 1000 ] || fail "paused at step 1000, Samples shows the sample of step $(shown 2)"
    click_on probe_button
    new_layout
    type_into probe_field "to be"
    xdotool keydown --window "$wid" Return; shot_step >/dev/null; xdotool keyup --window "$wid" Return
    for ((try = 0; try < 20; try++)); do new_layout; [ "$(layout_field heatmap 5)" = 5 ] && break; done
    [ "$(layout_field heatmap 5)" = 5 ] || fail "the probe typed: want a map of 5 (layout: $(grep heatmap layout))"
    [ "$(layout_field probe_step 1)" = 1000 ] || fail "the new probe should show the last step, 1000 (shows $(layout_field probe_step 1))"
    s_end=$(row_spread 5)
    # to step 0, then back to the end along the timeline (its right edge)
    click_on timeline_first
    for ((try = 0; try < 20; try++)); do new_layout; [ "$(layout_field probe_step 1)" = 0 ] && [ "$(shown 2)" = 0 ] && break; done
    [ "$(layout_field probe_step 1)" = 0 ] || fail "|< should show step 0 (shows $(layout_field probe_step 1))"
    [ "$(shown 2)" = 0 ] || fail "Samples at step 0: shows the sample of step $(shown 2)"
    h0=$(shown 3)
    s_first=$(row_spread 5)
    read -r x y w h <<<"$(layout_field timeline 1) $(layout_field timeline 2) $(layout_field timeline 3) $(layout_field timeline 4)"
    xdotool mousemove --window "$wid" $((x + w - 3)) $((y + h / 2)) click 1
    for ((try = 0; try < 20; try++)); do new_layout; [ "$(layout_field probe_step 1)" = 1000 ] && [ "$(shown 2)" = 1000 ] && break; done
    [ "$(layout_field probe_step 1)" = 1000 ] || fail "the timeline'"'"'s end should show step 1000 (shows $(layout_field probe_step 1))"
    [ "$(shown 2)" = 1000 ] || fail "Samples at step 1000: shows the sample of step $(shown 2)"
    echo "the typed probe'"'"'s last row colour spread: step 0 $s_first, step 1000 $s_end"
    [ "$s_first" -lt "$s_end" ] || fail "step 0 should be nearer uniform than step 1000"
    [ "$(shown 3)" != "$h0" ] || fail "the samples at steps 0 and 1000 are the same text"
    [ "$(layout_field legend_clipped 1)" = 0 ] || fail "the heatmap legend is cut off (layout: $(grep legend layout))"
    # the Heads view: every head'"'"'s scores at the shown step, other numbers at step 0 than at the end
    click_on heads_header
    for ((try = 0; try < 20; try++)); do new_layout; [ "$(layout_field heads_grid 3)" -gt 0 ] && break; done
    [ "$(layout_field heads_grid 3)" -gt 0 ] || fail "the Heads view did not open (layout: $(grep heads layout))"
    h_end=$(layout_field heads_hash 1)
    click_on timeline_first
    for ((try = 0; try < 20; try++)); do new_layout; [ "$(layout_field probe_step 1)" = 0 ] && break; done
    h_first=$(layout_field heads_hash 1)
    [ "$h_first" != "$h_end" ] || fail "the Heads grid shows the same scores at step 0 and step 1000"
    echo "Heads grid: step 0 and step 1000 differ"
    # knock the one head out: the validation loss with it out is computed at the shown step
    click_on knock_checkbox
    new_layout
    click_on heads_grid
    for ((try = 0; try < 30; try++)); do new_layout; [ "$(layout_field knock_val 1)" != -1 ] && break; sleep 0.2; done
    kv=$(layout_field knock_val 1)
    awk -v v="$kv" "BEGIN { exit !(v > 1) }" || fail "knocking the head out shows no validation loss (knock_val $kv)"
    echo "L1 H1 knocked out at step 0: val loss $kv"
    # colour by importance: the head knocked out alone at the shown step; at the end it matters
    click_on heads_by_combo
    for ((try = 0; try < 10; try++)); do new_layout; [ "$(layout_field heads_importance_item 3)" -gt 0 ] && break; done
    click_on heads_importance_item
    for ((try = 0; try < 30; try++)); do new_layout; [ "$(layout_field importance_step 1)" = 0 ] && break; sleep 0.2; done
    [ "$(layout_field heads_by 1)" = 6 ] || fail "colour by: importance was not chosen (layout: $(grep heads_by layout))"
    [ "$(layout_field importance_step 1)" = 0 ] || fail "no importance shown at step 0 (layout: $(grep importance layout))"
    # to the timeline'"'"'s end (clicked again while the shown step has not moved: the list just closed may take a click)
    for ((try = 0; try < 40; try++)); do
        if [ $((try % 5)) = 0 ] && [ "$(layout_field probe_step 1)" != 1000 ]; then
            read -r x y w h <<<"$(layout_field timeline 1) $(layout_field timeline 2) $(layout_field timeline 3) $(layout_field timeline 4)"
            xdotool mousemove --window "$wid" $((x + w - 3)) $((y + h / 2)) sleep 0.1 click 1
        fi
        new_layout
        [ "$(layout_field importance_step 1)" = 1000 ] && break
        sleep 0.2
    done
    [ "$(layout_field importance_step 1)" = 1000 ] || fail "no importance shown at step 1000 (layout: $(grep importance layout))"
    imp=$(layout_field importance_step 2)
    awk -v v="$imp" "BEGIN { exit !(v > 0.05) }" || fail "the trained head'"'"'s importance should be well above 0 (got $imp)"
    echo "L1 H1 importance at step 1000: +$imp"
    close_window
    n=$(grep -c "\[validation\]" app.out); [ "$n" -eq 0 ] || fail "$n validation message(s)"
    echo PASS
'
