#!/usr/bin/env bash
# A preset picked in the window's combo (Xvfb + openbox + xdotool) is the next model's, not the running one's: the
# running single-head model keeps its learning rate and eval interval (1e-3, 500) until Apply & restart, which then
# builds the bigram model with the bigram preset's (1e-2, 300). Both read from the checkpoints Ctrl+S writes.
# Usage: app_preset_test.sh ATTNLAB CORPUS  (0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
. "$(dirname "$0")/window_session.sh"
window_session 300 "" '
    export ATTN_SHOT_LAYOUT=1   # F12 also writes where the widgets are
    start app.out --preset single-head --checkpoint "$work/p.safetensors" --autosave 0
    wait_steps 2 || fail "the window did not train"
    # field NAME N: the Nth number of NAME in the last layout; click_on NAME: its middle, which must be in view
    field() { awk -v k="$1" -v n="$2" "\$1 == k { print \$(n + 1) }" layout; }
    click_on() {
        local x y w h
        read -r x y w h <<<"$(field "$1" 1) $(field "$1" 2) $(field "$1" 3) $(field "$1" 4)"
        [ "${w:-0}" -gt 0 ] || fail "$1 is not in view (layout: $(grep "^$1" layout))"
        xdotool mousemove --window "$wid" $((x + w / 2)) $((y + h / 2)) click 1
    }
    # new_layout: F12, then its layout sidecar in ./layout (keys are taken in order: every one sent before is seen)
    new_layout() {
        local i
        rm -f attnlab_step*; key F12
        for ((i = 0; i < 100; i++)); do ls attnlab_step*.png.layout >/dev/null 2>&1 && break; sleep 0.1; done
        sleep 0.3
        cp attnlab_step*.png.layout layout 2>/dev/null || fail "F12 wrote no layout"
    }
    # saved KEY: KEY of the config in the checkpoint a Ctrl+S writes now (one more "saved" line than before)
    saved() {
        local n0 i
        n0=$(grep -c "^attnlab: saved step" app.out)
        key ctrl+s
        for ((i = 0; i < 600; i++)); do [ "$(grep -c "^attnlab: saved step" app.out)" -gt "$n0" ] && break; sleep 0.1; done
        [ "$(grep -c "^attnlab: saved step" app.out)" -gt "$n0" ] || fail "Ctrl+S: no saved line"
        grep -a -o "\\\\\"$1\\\\\":[^,}]*" "$work/p.safetensors" | head -1 | sed "s/.*://" | tr -d "\\\\\""
    }
    near() { awk -v a="$1" -v b="$2" "BEGIN { d = a - b; exit !(d < 1e-6 && d > -1e-6) }"; }
    xdotool mousemove --window "$wid" 150 400 click --repeat 20 --delay 30 5   # scroll Controls to its end
    sleep 0.5
    new_layout
    click_on preset_combo
    new_layout   # the list open
    click_on preset_item_bigram
    new_layout
    p=$(saved preset); lr=$(saved lr); ei=$(saved eval_interval)
    [ "$p" = single-head ] || fail "after bigram was picked (not applied) the checkpoint is of preset \"$p\""
    near "$lr" 0.001 || fail "after bigram was picked (not applied) the running model trains at lr $lr, not 1e-3"
    [ "$ei" = 500 ] || fail "after bigram was picked (not applied) the eval interval is $ei, not 500"
    echo "bigram picked: the running single-head model kept lr $lr and eval interval $ei"
    new_layout   # the checkpoint lines above it moved Apply & restart down
    click_on restart_button
    wait_for app.out "^attnlab: restarted: bigram on" 60 || fail "Apply & restart did not build the bigram model"
    wait_steps 2 || fail "the bigram model did not train"
    p=$(saved preset); lr=$(saved lr); ei=$(saved eval_interval)
    [ "$p" = bigram ] || fail "after Apply & restart the checkpoint is of preset \"$p\""
    near "$lr" 0.01 || fail "after Apply & restart the bigram model trains at lr $lr, not its preset'"'"'s 1e-2"
    [ "$ei" = 300 ] || fail "after Apply & restart the eval interval is $ei, not the bigram preset'"'"'s 300"
    echo "Apply & restart: bigram at lr $lr, eval interval $ei"
    close_window
    n=$(grep -c "\[validation\]" app.out); [ "$n" -eq 0 ] || fail "$n validation message(s)"
    echo "PASS"
'
