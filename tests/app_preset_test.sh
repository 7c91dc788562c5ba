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
    ck=$work/p.safetensors
    start app.out --preset single-head --checkpoint "$ck" --autosave 0
    wait_steps 2 || fail "the window did not train"
    near() { awk -v a="$1" -v b="$2" "BEGIN { d = a - b; exit !(d < 1e-6 && d > -1e-6) }"; }
    xdotool mousemove --window "$wid" 150 400 click --repeat 20 --delay 30 5   # scroll Controls to its end
    new_layout
    click_on preset_combo
    new_layout   # the list open
    click_on preset_item_bigram
    save_checkpoint app.out
    p=$(checkpoint_setting "$ck" preset); lr=$(checkpoint_setting "$ck" lr); ei=$(checkpoint_setting "$ck" eval_interval)
    [ "$p" = single-head ] || fail "after bigram was picked (not applied) the checkpoint is of preset \"$p\""
    near "$lr" 0.001 || fail "after bigram was picked (not applied) the running model trains at lr $lr, not 1e-3"
    [ "$ei" = 500 ] || fail "after bigram was picked (not applied) the eval interval is $ei, not 500"
    echo "bigram picked: the running single-head model kept lr $lr and eval interval $ei"
    new_layout   # the checkpoint lines above it moved Apply & restart down
    click_on restart_button
    wait_for app.out "^attnlab: restarted: bigram on" 60 || fail "Apply & restart did not build the bigram model"
    wait_steps 2 || fail "the bigram model did not train"
    save_checkpoint app.out
    p=$(checkpoint_setting "$ck" preset); lr=$(checkpoint_setting "$ck" lr); ei=$(checkpoint_setting "$ck" eval_interval)
    [ "$p" = bigram ] || fail "after Apply & restart the checkpoint is of preset \"$p\""
    near "$lr" 0.01 || fail "after Apply & restart the bigram model trains at lr $lr, not its preset'"'"'s 1e-2"
    [ "$ei" = 300 ] || fail "after Apply & restart the eval interval is $ei, not the bigram preset'"'"'s 300"
    echo "Apply & restart: bigram at lr $lr, eval interval $ei"
    close_window
    n=$(grep -c "\[validation\]" app.out); [ "$n" -eq 0 ] || fail "$n validation message(s)"
    echo "PASS"
'
