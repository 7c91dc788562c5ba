#!/usr/bin/env bash
# The loss plot survives a bad learning rate: lr 10 typed into the window while it trains (Xvfb + openbox +
# xdotool), then the plot's y range (the layout sidecar's loss_y) stays within twice the largest loss estimate the
# run wrote to --metrics: one exploding step must not flatten every other point against the x axis.
# Usage: app_plot_test.sh ATTNLAB CORPUS  (0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
. "$(dirname "$0")/window_session.sh"
window_session 300 "" '
    export ATTN_SHOT_LAYOUT=1   # F12 also writes where the widgets are
    start app.out --preset single-head --checkpoint "$work/plot.safetensors" --autosave 0 --eval-interval 10 --metrics "$work/m.csv"
    wait_steps 20 || fail "the window did not train"
    # two resets (R, then Enter to the "Reset?" prompt): the loss plot keeps both runs as ghosts with names apart
    for r in 1 2; do
        key r; sleep 0.3; key Return
        for ((t = 0; t < 300; t++)); do [ "$(grep -c "^attnlab: built preset" app.out)" -gt "$r" ] && break; sleep 0.1; done
        [ "$(grep -c "^attnlab: built preset" app.out)" -gt "$r" ] || fail "R and Enter did not reset"
        wait_steps 20 || fail "the window did not train after reset $r"
    done
    frame_seen() { shot_step >/dev/null || fail "F12 wrote no screenshot"; }
    new_layout_once() { rm -f attnlab_step*; key F12; for ((i = 0; i < 100; i++)); do ls attnlab_step*.png.layout >/dev/null 2>&1 && break; sleep 0.1; done
                        cp attnlab_step*.png.layout layout || fail "F12 wrote no layout"; rm -f attnlab_step*; }
    new_layout_once
    grep "^ghost " layout
    [ "$(grep -c "^ghost " layout)" = 2 ] || fail "want two ghost runs after two resets"
    grep -q "^ghost #1 single-head" layout && grep -q "^ghost #2 single-head .*(same settings as #1)" layout ||
        fail "ghost names should be numbered and say what differs (layout: $(grep "^ghost" layout | tr "\n" " "))"
    read -r x y w h <<<"$(layout_field lr_field 1) $(layout_field lr_field 2) $(layout_field lr_field 3) $(layout_field lr_field 4)"
    [ "${w:-0}" -gt 0 ] || fail "the learning rate field is not in view (layout: $(grep "^lr_field" layout))"
    # the field: a click on its text, Ctrl+A and Return held over frame starts (Dear ImGui 1.86 polls keys)
    xdotool mousemove --window "$wid" $((x + 12)) $((y + h / 2)) click 1
    frame_seen
    xdotool keydown --window "$wid" ctrl; xdotool keydown --window "$wid" a; frame_seen; frame_seen
    xdotool keyup --window "$wid" a; xdotool keyup --window "$wid" ctrl; frame_seen
    xdotool type --window "$wid" 1; frame_seen; xdotool type --window "$wid" 0; frame_seen
    xdotool keydown --window "$wid" Return; frame_seen; xdotool keyup --window "$wid" Return; frame_seen
    s0=$(shot_step) || fail "F12 wrote no screenshot"
    for ((t = 0; t < 120; t++)); do   # 60 steps more at lr 10 (or until the run stops on NaN/Inf)
        s=$(shot_step) || fail "F12 wrote no screenshot"
        [ "$s" -ge $((s0 + 60)) ] && break
        grep -q "NaN/Inf" app.out && break
        sleep 0.5
    done
    new_layout_once
    sleep 1   # the metrics file is rewritten after each estimate: now it has every one the plot had
    read -r lo hi <<<"$(layout_field loss_y 1) $(layout_field loss_y 2)"
    est=$(awk -F, "NR > 1 { for (i = 2; i <= 3; i++) if (\$i != \"\" && \$i + 0 > m) m = \$i + 0 } END { print m + 0 }" "$work/m.csv")
    echo "lr 10 from step $s0; at step $s: y axis $lo .. $hi, largest loss estimate $est ($(($(grep -c . "$work/m.csv") - 1)) estimates)"
    awk -v hi="$hi" -v est="$est" "BEGIN { exit !(est > 0 && hi + 0 > 0 && hi <= 2 * est) }" ||
        fail "the y axis runs to $hi, more than twice the largest estimate $est"
    close_window
    n=$(grep -c "\[validation\]" app.out); [ "$n" -eq 0 ] || fail "$n validation message(s)"
    echo "PASS"
'
