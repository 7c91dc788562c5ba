# Drives the real attnlab window under Xvfb + openbox with xdotool: sourced by the window tests, inside xvfb-run,
# in the folder the app should run in (it autosaves and writes F12 screenshots there). Needs BIN and CORPUS set.
# The window also prints what it says (checkpoint outcomes, divergence, Revert, device failures) on stdout,
# one "attnlab: ..." line each: that is what these helpers wait for.

# fail MESSAGE: prints it and every app's output, stops the app, exits 1
fail() {
    echo "FAIL: $*"
    for f in ./*.out; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done
    if [ -n "${pid:-}" ] && kill -0 "$pid" 2>/dev/null; then
        echo "--- attnlab ($pid) is still running; its threads:"
        command -v gdb >/dev/null && timeout 60 gdb -p "$pid" -batch -ex "thread apply all bt 12" 2>/dev/null | grep -E "^(Thread|#)"
        kill "$pid"
    fi
    exit 1
}

# wait_for FILE REGEX SECONDS: until a line of FILE matches (grep -E); false after SECONDS
wait_for() {
    local i
    for ((i = 0; i < $3 * 10; i++)); do
        grep -qE -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# start OUT ARGS...: starts attnlab (bigram, tiny evaluations, the validation layer on: a message fails the exit code)
# with stdout+stderr in OUT; sets pid and wid
start() {
    local out=$1
    shift
    "$BIN" --validation --data "$CORPUS" --preset bigram --max-iters 100000000 --eval-iters 2 --sample-chars 20 "$@" \
        >"$out" 2>&1 &
    pid=$!
    wid=$(timeout 60 xdotool search --sync --onlyvisible --pid "$pid" --name "Attention Lab" | head -1)
    [ -n "$wid" ] || fail "no window appeared"
}

# key KEYS...: to the window (Space pauses/resumes, ctrl+s saves, F12 screenshots, ...)
key() { xdotool key --window "$wid" "$@"; }

# shot_step: F12, then the step in the screenshot's name (attnlab_stepN.png), which is removed; false if none came
shot_step() {
    rm -f attnlab_step*.png
    key F12
    local i f
    for ((i = 0; i < 100; i++)); do
        f=$(ls attnlab_step*.png 2>/dev/null | head -1)
        [ -n "$f" ] && { rm -f attnlab_step*.png; f=${f#attnlab_step}; echo "${f%.png}"; return 0; }
        sleep 0.1
    done
    return 1
}

# pause / resume: Space, checked by F12 screenshots (shot_step): the first comes back once the Space before it is
# taken in (keys are handled in order), so a step still under way has 0.3 s to end; then two more 0.5 s apart show the
# same step (paused) or a later one (training). Space again if the state did not change: a synthetic key press was
# seen to go missing on a loaded CI machine. Training must advance a step in 0.5 s (the tests' bigram models do).
pause() { space_until paused; }
resume() { space_until training; }
space_until() {
    local try a b
    for try in 1 2 3; do
        key space
        shot_step >/dev/null || fail "F12 wrote no screenshot"
        sleep 0.3
        a=$(shot_step) || fail "F12 wrote no screenshot"
        sleep 0.5
        b=$(shot_step) || fail "F12 wrote no screenshot"
        if [ "$1" = paused ]; then [ "$a" = "$b" ] && return 0; else [ "$b" -gt "$a" ] && return 0; fi
        echo "note: the window is not $1 after Space (steps $a, $b): pressing it again"
    done
    fail "the window is not $1 after three presses of Space"
}

# wait_steps N: until the window has trained N steps (F12 every half second), for at most 60 s; false after that
wait_steps() {
    local i s
    for ((i = 0; i < 120; i++)); do
        s=$(shot_step) && [ "$s" -ge "$1" ] && return 0
        sleep 0.5
    done
    return 1
}

# shows_step N: until an F12 screenshot shows step N (the window publishes what its training thread did at its next
# frame), for at most 10 s; echoes the last step seen, false if it never was N
shows_step() {
    local i s=
    for ((i = 0; i < 50; i++)); do
        s=$(shot_step) || fail "F12 wrote no screenshot"
        [ "$s" = "$1" ] && break
        sleep 0.2
    done
    echo "$s"
    [ "$s" = "$1" ]
}

# wait_exit SECONDS: until attnlab ($pid) has exited, then rc is its exit code and pid is cleared; false (rc unset)
# if it still runs after SECONDS
wait_exit() {
    local i
    for ((i = 0; i < $1 * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && return 1
    wait "$pid"
    rc=$?
    pid=
}

# close_window: the window manager's close (Alt+F4 in openbox, as a user would), then the exit code must be 0
# (Alt+F4 again every 10 s while it runs: a synthetic key press can go missing on a loaded machine)
close_window() {
    local i
    for ((i = 0; i < 300; i++)); do
        if ((i % 100 == 0)); then
            timeout 5 xdotool windowactivate --sync "$wid" 2>/dev/null
            timeout 5 xdotool key alt+F4
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && fail "attnlab did not quit within 30 s of Alt+F4"
    wait "$pid"
    local rc=$?
    pid=
    [ "$rc" -eq 0 ] || fail "attnlab exited with $rc after Alt+F4"
}

# headless_resume FILE: echoes the step attnlab --headless --resume FILE resumed at; false (and why, on stderr) if
# it refused the file
headless_resume() {
    local out
    out=$("$BIN" --headless --quiet --data "$CORPUS" --resume "$1" --max-iters 1 --eval-iters 1 \
        --sample-chars 0 2>&1)
    grep -oE "^resumed $1 at step [0-9]+" <<<"$out" | grep -oE "[0-9]+$" || { echo "$out" >&2; return 1; }
}

# The widgets' places: with ATTN_SHOT_LAYOUT=1 each F12 screenshot also writes a layout sidecar (NAME x y w h lines;
# renamed into place, so complete once it appears).
# new_layout: F12 until two sidecars in a row agree (keys are taken in order: the first shows every key and click sent
# before it; the second that nothing was still moving, a scroll or a line that came in), copied to ./layout
new_layout() {
    local i try moved
    rm -f layout
    for ((try = 0; try < 10; try++)); do
        rm -f attnlab_step*
        key F12
        for ((i = 0; i < 100; i++)); do ls attnlab_step*.png.layout >/dev/null 2>&1 && break; sleep 0.1; done
        ls attnlab_step*.png.layout >/dev/null 2>&1 || fail "F12 wrote no layout"
        # (the sample shown, the map's labels and the loss plot's y range are left out: a live run changes them as it
        # trains)
        if [ -f layout ] && cmp -s <(grep -Ev '^(samples_|heatmap_labels |loss_y )' layout) <(grep -Ev '^(samples_|heatmap_labels |loss_y )' attnlab_step*.png.layout); then
            rm -f attnlab_step*
            return 0
        fi
        [ -f layout ] && moved=$(diff <(grep -Ev '^(samples_|heatmap_labels |loss_y )' layout) <(grep -Ev '^(samples_|heatmap_labels |loss_y )' attnlab_step*.png.layout) | tr '\n' ' ')
        cp attnlab_step*.png.layout layout
    done
    fail "the widgets kept moving: ten F12 layouts in a row differ (the last two: ${moved:-})"
}
# layout_field NAME N: the Nth number of NAME in ./layout
layout_field() { awk -v k="$1" -v n="$2" '$1 == k { print $(n + 1) }' layout; }
# click_on NAME: a click in the middle of the widget NAME of ./layout, which must be in view
click_on() {
    local x y w h
    read -r x y w h <<<"$(layout_field "$1" 1) $(layout_field "$1" 2) $(layout_field "$1" 3) $(layout_field "$1" 4)"
    [ "${w:-0}" -gt 0 ] || fail "$1 is not in view (layout: $(grep "^$1 " layout))"
    xdotool mousemove --window "$wid" $((x + w / 2)) $((y + h / 2)) click 1
}

# type_into NAME TEXT: a click on the widget NAME of ./layout, Ctrl+A held over a frame start (F12 screenshots mark
# the frames), TEXT typed, and one more frame
type_into() {
    click_on "$1"
    xdotool keydown --window "$wid" ctrl; xdotool keydown --window "$wid" a
    shot_step >/dev/null || fail "F12 wrote no screenshot"
    xdotool keyup --window "$wid" a; xdotool keyup --window "$wid" ctrl
    xdotool type --window "$wid" --delay 20 "$2"
    shot_step >/dev/null || fail "F12 wrote no screenshot"
}

# row_spread N: the spread of the heatmap's last row of N cells in a fresh F12 screenshot: (max - min) of r+g+b over
# its cells (a uniform row is one colour, 0; a peaked one spans the colour map); needs ImageMagick's convert
row_spread() {
    rm -f attnlab_step*
    key F12
    local i j png x y w h
    for ((i = 0; i < 100; i++)); do ls attnlab_step*.png.layout >/dev/null 2>&1 && break; sleep 0.1; done
    png=$(ls attnlab_step*.png | head -1)
    [ -n "$png" ] || fail "F12 wrote no screenshot"
    read -r x y w h <<<"$(awk '$1 == "heatmap" { print $2, $3, $4, $5 }' "$png.layout")"
    for ((j = 0; j < $1; j++)); do   # inside each cell, away from the value written in its middle
        convert "$png" -crop "1x1+$((x + j * w / $1 + 3))+$((y + ($1 - 1) * h / $1 + 3))" +repage -alpha off txt:- |
            awk 'NR == 2 { c = $2; gsub(/[()]/, "", c); split(c, v, ","); print v[1] + v[2] + v[3] }'
    done | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print hi - lo }'
}

# save_checkpoint OUT: Ctrl+S, then until OUT (the app's output) has one more "saved step" line than before it
save_checkpoint() {
    local n0 i
    n0=$(grep -c "^attnlab: saved step" "$1")
    key ctrl+s
    for ((i = 0; i < 600; i++)); do [ "$(grep -c "^attnlab: saved step" "$1")" -gt "$n0" ] && return 0; sleep 0.1; done
    fail "Ctrl+S: no new \"saved step\" line in $1"
}
# checkpoint_setting FILE KEY: KEY's value in the settings a checkpoint stores (its metadata's JSON, quotes dropped)
checkpoint_setting() {
    grep -a -o "\\\\\"$2\\\\\":[^,}]*" "$1" | head -1 | sed 's/.*://' | tr -d '\\"'
}
