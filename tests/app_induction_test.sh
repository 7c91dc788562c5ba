#!/usr/bin/env bash
# The induction preset in the window (Xvfb + openbox + xdotool): trained past its loss drop, the loss plot's
# "in-context" switch draws the in-context learning score at every recorded step, higher at the end than at step 0;
# the Heads view scrubbed across the drop shows other scores before and after it, and the loss plot marks the step
# where the induction score rose most, inside the run. Where things are come from F12's layout sidecar.
# Usage: app_induction_test.sh ATTNLAB CORPUS  (0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
. "$(dirname "$0")/window_session.sh"
window_session 600 "convert" '
    export ATTN_SHOT_LAYOUT=1
    start app.out --data induction --preset induction --max-iters 2200 --eval-iters 20 --sample-chars 0 --autosave 0
    for ((w = 0; w < 8; w++)); do wait_steps 2200 && break; done
    [ "$(shot_step)" -ge 2200 ] || fail "the window did not train the induction preset to step 2200"
    new_layout
    click_on icl_checkbox
    for ((try = 0; try < 40; try++)); do new_layout; [ "$(layout_field icl 1)" -ge 10 ] && break; sleep 0.3; done
    n=$(layout_field icl 1); last=$(layout_field icl 2)
    [ "$n" -ge 10 ] || fail "in-context: want the score at 10 or more recorded steps (layout: $(grep icl layout))"
    awk -v v="$last" "BEGIN { exit !(v > 0.3) }" || fail "the in-context score at the end should be well above 0 (got $last)"
    echo "in-context learning score at $n recorded steps, last $last"
    # the Heads view, at step 0 and at the end: other scores once the induction heads formed
    click_on probe_button
    new_layout
    click_on heads_header
    for ((try = 0; try < 30; try++)); do new_layout; [ "$(layout_field heads_grid 3)" -gt 0 ] && break; sleep 0.2; done
    [ "$(layout_field heads_grid 3)" -gt 0 ] || fail "the Heads view did not open (layout: $(grep heads layout))"
    h_end=$(layout_field heads_hash 1)
    click_on timeline_first
    for ((try = 0; try < 30; try++)); do new_layout; [ "$(layout_field probe_step 1)" = 0 ] && break; sleep 0.2; done
    [ "$(layout_field probe_step 1)" = 0 ] || fail "|< should show step 0 (shows $(layout_field probe_step 1))"
    [ "$(layout_field heads_hash 1)" != "$h_end" ] || fail "the Heads grid shows the same scores at step 0 and the end"
    rise=$(layout_field induction_rise 1)
    [ "$rise" -gt 0 ] && [ "$rise" -le 2200 ] || fail "the loss plot should mark where the induction score rose (got $rise)"
    echo "the induction score rose most at step $rise"
    close_window
    n=$(grep -c "\[validation\]" app.out); [ "$n" -eq 0 ] || fail "$n validation message(s)"
    echo PASS
'
