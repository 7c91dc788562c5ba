#!/usr/bin/env bash
# nanoGPT's ckpt.pt in the real window (Xvfb + openbox + xdotool): Ctrl+O opens it like any checkpoint (meta.pkl beside
# it gives the characters), it waits paused at its step, trains on with Space, draws its heatmaps, and Ctrl+S refuses
# to write a safetensors file over the PyTorch checkpoint (its reason on stdout) while the run goes on.
# Usage: app_nanogpt_test.sh ATTNLAB CORPUS  (0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
FIXTURES=$(cd "$(dirname "$0")/fixtures" && pwd)
export FIXTURES
. "$(dirname "$0")/window_session.sh"
window_session 300 "" '
    for i in $(seq 60); do printf "ab a\nb\xc3\xa9 ba\xc3\xa9 a b\n"; done >five.txt   # meta.pkl'"'"'s five characters
    cp "$FIXTURES/nanogpt_step.pt" ckpt.pt
    cp "$FIXTURES/meta.pkl" meta.pkl
    export ATTN_SHOT_LAYOUT=1
    CORPUS=$PWD/five.txt
    start app.out --checkpoint "$PWD/ckpt.pt"
    wait_steps 2 || fail "the window did not train"
    for try in 1 2 3 4; do   # a synthetic key press was seen to go missing on a loaded CI machine
        key ctrl+o
        wait_for app.out "^attnlab: loaded $PWD/ckpt.pt at step 1$" 15 && break
        [ "$try" -lt 4 ] || fail "Ctrl+O of ckpt.pt: no loaded line"
    done
    grep -q "^attnlab: note: $PWD/ckpt.pt: characters from .*meta.pkl" app.out || fail "where the characters came from was not said"
    s=$(shows_step 1) || fail "after Ctrl+O the window shows step $s, the nanoGPT checkpoint holds 1"
    resume
    wait_steps 20 || fail "the imported run did not train on"
    pause   # the layout holds still while paused
    new_layout
    grep -q "^heatmap " layout || fail "no heatmap drawn for the imported run (layout: $(cat layout))"
    key ctrl+s
    wait_for app.out "save failed: .*ckpt.pt. is a PyTorch checkpoint" 30 || fail "Ctrl+S over ckpt.pt was not refused"
    cmp -s ckpt.pt "$FIXTURES/nanogpt_step.pt" || fail "the PyTorch checkpoint was changed"
    echo "Ctrl+O opened nanoGPT'"'"'s ckpt.pt at step 1, trained on to step 20, Ctrl+S refused to overwrite it"
    key alt+F4
    wait "$pid" || fail "attnlab exited with $?"
'
