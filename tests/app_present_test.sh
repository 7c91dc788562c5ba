#!/usr/bin/env bash
# What reaches the X server (Xvfb + openbox + xdotool), for both ways frames are presented: ATTN_PRESENT=x11-shm puts
# them into the window through X11 shared memory (app/present_x11.h; the default with a CPU Vulkan driver, which the
# default run must then take), ATTN_PRESENT=swapchain uses the Vulkan swapchain. Each way: the window's pixels as the
# X server has them (ImageMagick `import`) match the app's own F12 screenshot (same size; a coloured area with red
# and blue swapped would not), they follow a resize, and the app quits cleanly with the validation layer silent. An
# unknown ATTN_PRESENT is refused in one line. In the x11-shm run every partial redraw (only the panels that changed are
# drawn again) is compared with a full redraw of the same frame (ATTN_CHECK_REDRAW=1), through training, pausing, the
# pointer's tooltips, the Lab opening and closing, and a resize: not one may differ; and only the rectangles drawn
# again go to the X server (ATTN_CHECK_REDRAW also stops the whole-frame present every 250 ms), so the server's picture
# matching the screenshot checks those partial presents too.
# Usage: app_present_test.sh ATTNLAB CORPUS  (0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
. "$(dirname "$0")/window_session.sh"
window_session 400 "import compare convert" '

    msg=$(ATTN_PRESENT=bogus timeout 60 "$BIN" --data "$CORPUS" 2>&1 >/dev/null); rc=$?
    [ $rc -ne 0 ] && [[ "$msg" == *"ATTN_PRESENT=bogus"*swapchain* ]] ||
        fail "ATTN_PRESENT=bogus: want a non-zero exit and a line naming the choices (got $rc: $msg)"

    # server_matches_app W H LABEL: the window as the X server has it is W x H and matches an F12 screenshot
    server_matches_app() {
        local i j app server
        # F12 until the app draws at W x H (after a resize its next frames do), then once more: that later frame
        # has started, so the screenshot'"'"'s frame has reached the X server
        for ((i = 0; i < 20; i++)); do
            rm -f attnlab_step*.png
            key F12
            for ((j = 0; j < 100; j++)); do ls attnlab_step*.png >/dev/null 2>&1 && break; sleep 0.1; done
            app=$(ls attnlab_step*.png 2>/dev/null | head -1)
            [ -n "$app" ] || fail "$3: F12 wrote no screenshot"
            [ "$(convert "$app" -format "%wx%h" info:)" = "$1x$2" ] && break
        done
        mv "$app" app.png
        app=app.png
        shot_step >/dev/null || fail "$3: F12 wrote no screenshot"
        import -window "$wid" server.png || fail "$3: import could not read the window"
        local size
        size=$(convert server.png -format "%wx%h" info:)
        [ "$size" = "$1x$2" ] || fail "$3: the X server shows ${size}, the window is $1x$2"
        [ "$(convert "$app" -format "%wx%h" info:)" = "$size" ] || fail "$3: the F12 screenshot is not ${size}"
        local colours diff total
        colours=$(convert server.png -format "%k" info:)
        [ "$colours" -gt 50 ] || fail "$3: the window looks blank on the X server ($colours colours)"
        # paused: the same picture but for counters (fps) in the status bar; with red and blue swapped every coloured
        # pixel would differ (buttons, the heatmap, the plots: ~10% of the window)
        diff=$(compare -metric AE -fuzz 8% "$app" server.png null: 2>&1 | awk "{printf \"%d\", \$1}")
        total=$(( $1 * $2 ))
        echo "$3: ${size}, $colours colours, $diff of $total pixels differ from the F12 screenshot"
        [ "$diff" -le $(( total / 50 )) ] || fail "$3: the X server shows another picture than the app drew ($diff pixels differ)"
        rm -f attnlab_step*.png server.png app.png
    }

    for mode in default x11-shm swapchain; do
        if [ $mode = default ]; then unset ATTN_PRESENT; else export ATTN_PRESENT=$mode; fi
        if [ $mode = x11-shm ]; then export ATTN_CHECK_REDRAW=1; else unset ATTN_CHECK_REDRAW; fi
        rm -f attnlab_autosave.safetensors  # the run before autosaved at quit: no resume prompt (nothing trains under it)
        start $mode.out --eval-interval 50
        wait_steps 30 || fail "$mode: the window did not train 30 steps within 60 s"
        if [ $mode = x11-shm ]; then   # tooltips and the Lab over the panels, then gone again (a user'"'"'s pace)
            for xy in "60 360" "200 540" "400 70" "700 600" "1000 200" "640 790"; do
                xdotool mousemove --window "$wid" $xy; sleep 0.4
            done
            key l; sleep 1.5; key l; sleep 0.5
            xdotool mousemove --window "$wid" 5 5; sleep 1.6   # nothing hovered, tooltips closed
        fi
        pause   # a still picture
        read -r W H <<<"$(xdotool getwindowgeometry --shell "$wid" | awk -F= "/^WIDTH/{w=\$2} /^HEIGHT/{h=\$2} END{print w, h}")"
        server_matches_app "$W" "$H" "$mode"
        xdotool windowsize --sync "$wid" 900 600 || fail "$mode: xdotool could not resize the window"
        read -r W H <<<"$(xdotool getwindowgeometry --shell "$wid" | awk -F= "/^WIDTH/{w=\$2} /^HEIGHT/{h=\$2} END{print w, h}")"
        [ "$W" -lt 1280 ] || fail "$mode: the window was not resized (${W}x${H})"
        server_matches_app "$W" "$H" "$mode, resized"
        kill -0 "$pid" 2>/dev/null || fail "$mode: attnlab died after the resize"
        close_window
        grep -q "\[validation\]" $mode.out && fail "$mode: validation messages"
        if [ $mode = x11-shm ]; then
            line=$(grep "partial redraws checked" $mode.out) || fail "x11-shm: no partial-redraw check line"
            echo "$line"
            read -r n bad <<<"$(sed -E "s/.*: ([0-9]+) frames, ([0-9]+) differed.*/\1 \2/" <<<"$line")"
            [ "$n" -ge 20 ] || fail "x11-shm: only $n partial redraws were checked"
            [ "$bad" -eq 0 ] || fail "x11-shm: $bad partial redraws differ from a full redraw"
        fi
        if [ $mode = default ] && grep -q "^device: llvmpipe" $mode.out; then
            grep "presenting through the swapchain" $mode.out && fail "default: lavapipe should present through X11 shared memory"
        fi
    done
    unset ATTN_PRESENT
    echo PASS
'
