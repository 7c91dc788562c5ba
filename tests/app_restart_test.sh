#!/usr/bin/env bash
# Apply & restart on another corpus, as a user does it in the window (Xvfb + openbox + xdotool): a missing
# path first (said on stdout, Apply & restart left in place), then the corpus field clicked, the path typed, Apply &
# restart clicked (where the F12 screenshot's layout
# sidecar says they are). The model is rebuilt on the new corpus, and the window's fonts with it: a corpus of
# accented Latin, Greek, Cyrillic and CJK gets glyphs for all but its emoji (past U+FFFF), which the window says at
# once; then it goes on drawing and quits cleanly with the validation layer silent.
# Usage: app_restart_test.sh ATTNLAB CORPUS  (0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
. "$(dirname "$0")/window_session.sh"
window_session 300 "" '
    for i in $(seq 500); do printf "caf\xc3\xa9 na\xc3\xafve \xce\xa9\xce\xbc\xce\xad\xce\xb3\xce\xb1 \xd0\xbf\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82 \xe4\xb8\xad\xe6\x96\x87 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x98\x80 Stra\xc3\x9fe\n"; done >uni.txt
    export ATTN_SHOT_LAYOUT=1   # F12 also writes where the widgets are
    start app.out
    wait_steps 2 || fail "the window did not train"
    ! grep "draw as" app.out || fail "tiny Shakespeare: characters said to have no glyph"

    pause   # paused first: the new model trains at once all the same (one rule for launch, Reset, Apply & restart)
    new_layout   # where the corpus field and Apply & restart are (click_on, window_driver.sh)
    # apply_corpus PATH: PATH typed into the corpus field, Apply & restart clicked
    apply_corpus() {
        type_into corpus_field "$1"
        click_on restart_button
    }
    # a path that is not there: the reason on stdout too, the run goes on, and Apply & restart stays where it was
    apply_corpus "$PWD/no_such_corpus.txt"
    wait_for app.out "^attnlab: Apply & restart not applied: .*no_such_corpus.txt" 30 ||
        fail "a missing corpus should be reported on stdout"
    grep "not applied" app.out
    before=$(grep "^restart_button " layout)
    new_layout
    [ "$(grep "^restart_button " layout)" = "$before" ] || fail "the Not applied line moved Apply & restart"
    apply_corpus "$PWD/uni.txt"
    wait_for app.out "^attnlab: restarted: bigram on .*/uni.txt$" 60 || fail "Apply & restart on uni.txt was not done"
    wait_for app.out "draw as" 30 || fail "no word on the new corpus glyphs"
    grep "draw as" app.out
    grep -qE "^attnlab: 1 of the corpus.s 31 characters draw as .* \(e\.g\. .* \(U\+1F600\)\): they are past U\+FFFF" app.out ||
        fail "the new corpus: want only the emoji without a glyph (scripts/setup.sh installs the fonts)"
    a=$(shot_step) || fail "no screenshot after the restart"
    sleep 1
    b=$(shot_step) || fail "no screenshot after the restart"
    [ "$b" -gt "$a" ] || fail "Apply & restart from a paused run: the new model should train at once (steps $a, $b)"
    echo "Apply & restart while paused: the new model trains at once (steps $a, $b)"
    close_window
    n=$(grep -c "\[validation\]" app.out); [ "$n" -eq 0 ] || fail "$n validation message(s)"
    echo "PASS"
'
