#!/usr/bin/env bash
# Divergence and device faults in the real window (Xvfb + openbox + xdotool), made real with --inject-fault:
# - nan@150: the weights turn NaN before step 150, the GPU's NaN/Inf check catches it, training pauses at step 150
#   with the message; Ctrl+Z (Revert) restores the good state of step 100, Space trains on, and every loss the
#   window reports afterwards (--metrics at quit) is finite.
# - device-lost@250 and oom@250: the window says what happened, keeps running (F12 still answers), saves the good
#   state of step 200 to attnlab_autosave.safetensors, which --headless --resume accepts, and quits cleanly.
# Usage: app_fault_test.sh ATTNLAB CORPUS  (0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
. "$(dirname "$0")/window_session.sh"
window_session 300 "" '

    # --- NaN, then Revert ---
    start nan.out --eval-interval 50 --autosave 0 --inject-fault nan@150 --metrics "$work/nan.csv"
    wait_for nan.out "^attnlab: The loss became NaN/Inf at step 150: learning rate 0.01 is probably too high. Training is paused.$" 60 ||
        fail "no divergence message for the NaN injected at step 150"
    s1=$(shot_step) || fail "F12 wrote no screenshot"
    sleep 1   # watched for 1 s: it stays paused
    s2=$(shot_step) || fail "F12 wrote no screenshot"
    [ "$s1" = 150 ] && [ "$s2" = 150 ] || fail "training should stay paused at step 150 (screenshots at steps $s1, $s2)"
    key ctrl+z
    wait_for nan.out "^attnlab: reverted to step 100: paused; lower the learning rate, then Start$" 60 || fail "Ctrl+Z did not revert"
    s3=$(shot_step) || fail "F12 wrote no screenshot"
    [ "$s3" = 100 ] || fail "after Revert the window shows step $s3, not 100"
    resume
    wait_steps 201 || fail "training did not go on past step 200 after Revert"
    s4=$(shot_step) || fail "F12 wrote no screenshot"
    close_window
    [ "$(grep -c "NaN/Inf" nan.out)" -eq 1 ] || fail "the loss became NaN/Inf again after Revert"
    # the evaluations the window reports at quit: from step 0 on, past the fault, every loss finite
    bad=$(awk -F, "NR > 1 && (\$2 !~ /^[0-9.e+-]+\$/ || \$3 !~ /^[0-9.e+-]+\$/)" nan.csv)
    [ -z "$bad" ] || fail "--metrics holds non-finite losses after Revert: $bad"
    last=$(tail -1 nan.csv | cut -d, -f1)
    [ "$last" -gt 150 ] 2>/dev/null || fail "--metrics ends at step $last, not past the fault"
    grep -q "^150," nan.csv || fail "--metrics has no evaluation at step 150 after Revert"
    echo "nan@150: paused at step $s1, Revert to step $s3, trained on to step $s4; finite losses through step $last"

    # --- device lost / out of memory: a message, the last good state saved, no crash ---
    for fault in device-lost oom; do
        case $fault in
            device-lost) what="the GPU device was lost \(VK_ERROR_DEVICE_LOST in vkQueueSubmit \(--inject-fault $fault@250\); a driver reset or crash\)" ;;
            oom) what="the GPU ran out of memory \(VK_ERROR_OUT_OF_DEVICE_MEMORY in vkQueueSubmit \(--inject-fault $fault@250\)\): try a smaller batch size, block size or model" ;;
        esac
        rm -f attnlab_autosave.safetensors
        start $fault.out --eval-interval 50 --autosave 0 --inject-fault $fault@250
        wait_for $fault.out "^attnlab: $what; the last good state \(step 200\) was saved to attnlab_autosave.safetensors: restart attnlab to resume it$" 60 ||
            fail "$fault@250: no message, or not the expected one"
        grep -qx "attnlab: saved the last good state (step 200) to attnlab_autosave.safetensors" $fault.out ||
            fail "$fault@250: the Checkpoint section does not say the good state was saved"
        kill -0 "$pid" 2>/dev/null || fail "$fault@250: attnlab died"
        s=$(shot_step) || fail "$fault@250: the window stopped answering (F12 wrote nothing)"
        [ "$s" = 249 ] || fail "$fault@250: the window shows step $s, the fault came before step 250"
        close_window
        r=$(headless_resume attnlab_autosave.safetensors) || fail "$fault@250: --headless --resume refused the saved state"
        [ "$r" = 200 ] || fail "$fault@250: the saved state resumed at step $r, not 200"
        echo "$fault@250: message shown, window alive at step $s, good state of step $r saved and resumable"
    done
    echo PASS
'
