#!/usr/bin/env bash
# A live number typed into the window (Xvfb + openbox + xdotool) applies once its field is left, not at every
# keystroke: "5000" typed into the batch size passes through 5, 50 and 500, each a valid batch the running model
# would have taken on the way (it once trained at 500); 5000 itself is refused (over 4096), so after Enter the run
# must still train at its batch of 32, as the checkpoint Ctrl+S writes then says. Then "64" typed and Enter applies.
# Usage: app_live_test.sh ATTNLAB CORPUS  (0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
. "$(dirname "$0")/window_session.sh"
window_session 300 "" '
    export ATTN_SHOT_LAYOUT=1   # F12 also writes where the widgets are
    start app.out --checkpoint "$work/live.safetensors" --autosave 0
    wait_steps 2 || fail "the window did not train"
    new_layout
    read -r x y w h <<<"$(layout_field batch_field 1) $(layout_field batch_field 2) $(layout_field batch_field 3) $(layout_field batch_field 4)"
    [ "${w:-0}" -gt 0 ] || fail "the batch size field is not in view (layout: $(grep "^batch_field" layout))"
    # frame_seen: F12 and its screenshot back: a frame has started since every key sent before it
    frame_seen() { shot_step >/dev/null || fail "F12 wrote no screenshot"; }
    batch_in_checkpoint() { checkpoint_setting "$work/live.safetensors" batch_size; }  # after save_checkpoint
    # edit_batch: a click on the text part of the field (the +/- buttons and the label are to its right), then Ctrl+A
    # held over two frame starts (Dear ImGui 1.86 sees only keys held at a frame start; once was seen to miss)
    edit_batch() {
        xdotool mousemove --window "$wid" $((x + 12)) $((y + h / 2)) click 1
        frame_seen
        xdotool keydown --window "$wid" ctrl; xdotool keydown --window "$wid" a
        frame_seen; frame_seen
        xdotool keyup --window "$wid" a; xdotool keyup --window "$wid" ctrl
        frame_seen
    }
    # enter: Return held over a frame start (a quick press can fall between two frames and be missed)
    enter() { xdotool keydown --window "$wid" Return; frame_seen; xdotool keyup --window "$wid" Return; frame_seen; }
    # type_batch DIGIT...: the field edited, one digit a frame, Enter, then a Ctrl+S checkpoint (batch_in_checkpoint)
    type_batch() {
        local d
        edit_batch
        for d in "$@"; do xdotool type --window "$wid" "$d"; frame_seen; done
        enter
        save_checkpoint app.out   # after the edit: the training thread takes commands in order
    }
    type_batch 5 0 0 0
    b=$(batch_in_checkpoint)
    [ "$b" = 32 ] || fail "after typing 5000 (refused) the run trains at batch $b, not its 32"
    echo "5000 typed: refused, the run kept batch 32"
    type_batch 6 4
    b=$(batch_in_checkpoint)
    [ "$b" = 64 ] || fail "64 typed and Enter: the run trains at batch $b"
    echo "64 typed: applied once the field was left"
    close_window
    n=$(grep -c "\[validation\]" app.out); [ "$n" -eq 0 ] || fail "$n validation message(s)"
    echo "PASS"
'
