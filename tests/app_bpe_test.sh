#!/usr/bin/env bash
# The window on byte-level BPE tokens (Xvfb + openbox + xdotool): --tokenizer bpe:512 on tiny Shakespeare trains in
# the window, and the attention map's labels are tokens (several characters a label, a space as a middle dot): on
# the training batch and on the probe, whose labels are the tokens `attnlab tokenize` gives for the saved run. Then
# a window started on characters loads that run with Ctrl+O: the corpus is read again in the run's tokens and its
# labels are tokens again. The labels, and the tokens the sample is drawn as, come from the layout sidecar of F12 (ATTN_SHOT_LAYOUT=1).
# Usage: app_bpe_test.sh ATTNLAB CORPUS  (0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
. "$(dirname "$0")/window_session.sh"
window_session 300 "" '
    export ATTN_SHOT_LAYOUT=1
    probe="to be or not"
    # labels: the heat map'"'"'s labels once they read as the probe in tokens, or after 5 s what they read then
    probe_labels() {
        for ((try = 0; try < 25; try++)); do
            new_layout
            labels=$(grep "^heatmap_labels " layout | cut -d" " -f2-)
            [ "$(echo "$labels" | tr -d " ")" = "to·be·or·not" ] && return
            sleep 0.2
        done
    }
    start app.out --preset single-head --tokenizer bpe:512 --probe "$probe" --checkpoint "$work/b.safetensors" --autosave 0
    wait_steps 20 || fail "the window did not train on bpe:512 tokens"
    pause  # (a live batch changes its labels every step)
    new_layout
    labels=$(grep "^heatmap_labels " layout | cut -d" " -f2-)
    [ "$(echo "$labels" | wc -w)" = 8 ] || fail "the training batch should show 8 token labels (got: $labels)"
    echo "$labels" | tr " " "\n" | awk "length(\$0) > 1 { n++ } END { exit !(n > 0) }" ||
        fail "no training-batch label is a token of several characters (got: $labels)"
    [ "$(layout_field samples_tokens 1)" -gt 0 ] || fail "the sample should be drawn as tokens ($(grep "^samples_" layout))"
    click_on probe_button
    probe_labels  # (the probe map comes from the training thread a frame or more after the click)
    [ "$(echo "$labels" | tr -d " ")" = "to·be·or·not" ] || fail "the probe should read to·be·or·not in tokens (got: $labels)"
    save_checkpoint app.out
    ids=$("$BIN" tokenize "$work/b.safetensors" "$probe")
    [ "$(echo "$labels" | wc -w)" = "$(echo "$ids" | wc -w)" ] && [ "$(echo "$ids" | wc -w)" -lt 12 ] ||
        fail "the probe shows $(echo "$labels" | wc -w) labels; the run'"'"'s tokenizer gives $(echo "$ids" | wc -w) tokens ($ids)"
    close_window
    echo "bpe:512 in the window: batch and probe labelled in tokens ($labels)"

    # a window on characters loads the run of tokens: the corpus read again in them
    start app2.out --preset single-head --checkpoint "$work/b.safetensors" --autosave 0
    wait_steps 1 || fail "the second window did not train"
    key space
    for try in 1 2 3; do
        key ctrl+o
        wait_for app2.out "^attnlab: loaded $work/b.safetensors at step" 30 && break
        [ "$try" -lt 3 ] || fail "Ctrl+O: no loaded line"
    done
    new_layout
    click_on probe_button
    probe_labels
    [ "$(echo "$labels" | tr -d " ")" = "to·be·or·not" ] && [ "$(echo "$labels" | wc -w)" -lt 12 ] ||
        fail "after Ctrl+O the probe should read to·be·or·not in tokens (got: $labels)"
    close_window
    echo "PASS"
'
