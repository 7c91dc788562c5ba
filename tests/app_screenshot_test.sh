#!/usr/bin/env bash
# Window smoke test: attnlab trains 30 steps under Xvfb with validation on, then the screenshot's pixels are checked
# against the panel rectangles the app writes next to it (FILE.png.layout).
# Usage: app_screenshot_test.sh PATH/TO/attnlab PATH/TO/corpus.txt   (exit 0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus}
CORPUS=${2:?usage: $0 attnlab corpus}
. "$(dirname "$0")/window_session.sh"
need_tools xvfb-run convert identify awk
BIN=$(realpath "$BIN") CORPUS=$(realpath "$CORPUS")   # the last run is in another folder
# Without a display: one line that suggests --headless, exit 2.
msg=$(env -u DISPLAY -u WAYLAND_DISPLAY "$BIN" --data "$CORPUS" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && [ "$(printf '%s\n' "$msg" | wc -l)" -eq 1 ] && [[ "$msg" == *--headless* ]] ||
    { echo "FAIL: without a display attnlab should print one line suggesting --headless and exit 2 (got $rc: $msg)" >&2; exit 1; }

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
PNG=$OUT/x.png
fail() { echo "FAIL: $*" >&2; exit 1; }

window_run 600 --validation --exit-after-steps 30 --screenshot "$PNG" \
    --data "$CORPUS" --eval-interval 10 --eval-iters 5 >"$OUT/stdout" 2>"$OUT/stderr"
rc=$?
cat "$OUT/stdout"
[ $rc -eq 0 ] || { cat "$OUT/stderr" >&2; fail "attnlab exited $rc (want 0)"; }
nval=$(grep -c '\[validation\]' "$OUT/stderr")
[ "$nval" -eq 0 ] || { grep '\[validation\]' "$OUT/stderr" | head -20 >&2; fail "$nval validation message(s)"; }
[ -s "$PNG" ] || fail "no screenshot at $PNG"
[ -s "$PNG.layout" ] || fail "no layout sidecar at $PNG.layout"
cat "$PNG.layout"

field() { awk -v k="$1" -v n="$2" '$1 == k { print $(n + 1) }' "$PNG.layout"; }
read -r W H <<<"$(identify -format '%w %h' "$PNG")"
[ "$W" = "$(field window 1)" ] && [ "$H" = "$(field window 2)" ] ||
    fail "screenshot is ${W}x${H}, the window was $(field window 1)x$(field window 2)"
colours=$(convert "$PNG" -format '%k' info:)
[ "$colours" -gt 50 ] || fail "screenshot looks blank ($colours colours)"

# Controls at 1280x800: every widget of its open sections wholly in view with nothing to scroll, Start/Pause and
# Apply & restart among them.
read -r NW NH <<<"$(field controls_widgets 1) $(field controls_widgets 2)"
[ "${NW:-0}" -ge 20 ] && [ "${NH:-1}" -eq 0 ] ||
    fail "Controls: ${NH:-?} of ${NW:-?} widgets out of view: $(grep '^controls_hidden' "$PNG.layout" | tr '\n' ' ')"
[ "$(field controls_scroll 1)" = 0 ] || fail "Controls must be scrolled $(field controls_scroll 1) px to see everything"
for w in start_button restart_button corpus_field preset_combo; do
    [ "$(field $w 3)" -gt 0 ] 2>/dev/null || fail "Controls: $w is not in view"
done
echo "Controls: all $NW widgets in view at $(field window 1)x$(field window 2), nothing to scroll"

# Every pixel of a rectangle as "x y r g b" lines.
pixels() { convert "$PNG" -crop "$3x$4+$1+$2" +repage -alpha off txt:- |
    awk 'NR > 1 { split($1, xy, /[,:]/); c = $2; gsub(/[()]/, "", c); split(c, v, ","); print xy[1], xy[2], v[1], v[2], v[3] }'; }

# Heatmap: above the diagonal every cell has the masked colour; on/below it, colormap colours that vary.
read -r HX HY HW HH T <<<"$(field heatmap 1) $(field heatmap 2) $(field heatmap 3) $(field heatmap 4) $(field heatmap 5)"
[ "${T:-0}" -gt 1 ] || fail "no heatmap in the layout"
masked="$(field masked 1) $(field masked 2) $(field masked 3)"
pixels "$HX" "$HY" "$HW" "$HH" | awk -v T="$T" -v W="$HW" -v H="$HH" -v masked="$masked" '
    { pix[$1 " " $2] = $3 " " $4 " " $5 }
    END {
        bad = 0; distinct = 0
        for (i = 0; i < T; i++) for (j = 0; j < T; j++) {
            p = pix[int(j * W / T + 3) " " int(i * H / T + 3)]   # inside the cell, away from value text
            if (j > i) { if (p != masked) { bad++; print "cell", i, j, "above the diagonal is", p, "not masked", masked } }
            else { if (p == masked) { bad++; print "cell", i, j, "on/below the diagonal has the masked colour" }
                   if (!(p in seen)) { seen[p] = 1; distinct++ } }
        }
        print "heatmap: " distinct " distinct colours on/below the diagonal, " bad " wrong cells"
        exit (bad > 0 || distinct < 3) }' || fail "heatmap check"

# Loss plot: pixels of both estimate curves.
near() { awk -v c="$1" 'BEGIN { split(c, w, " ") } { d = 0; for (k = 1; k <= 3; k++) d += ($(k + 2) - w[k]) ^ 2 } d < 900 { n++ } END { print n + 0 }'; }
read -r LX LY LW LH <<<"$(field loss 1) $(field loss 2) $(field loss 3) $(field loss 4)"
ntrain=$(pixels "$LX" "$LY" "$LW" "$LH" | near "$(field train 1) $(field train 2) $(field train 3)")
nval=$(pixels "$LX" "$LY" "$LW" "$LH" | near "$(field val 1) $(field val 2) $(field val 3)")
echo "loss plot: $ntrain train-curve pixels, $nval val-curve pixels"
[ "$ntrain" -ge 30 ] && [ "$nval" -ge 30 ] || fail "loss curves missing from the plot"
# its background, a clear rather than triangles (add_opaque_fill): most of the plot's pixels, exactly that colour
nbg=$(pixels "$LX" "$LY" "$LW" "$LH" | awk -v c="$(field plot_bg 1) $(field plot_bg 2) $(field plot_bg 3)" '
    BEGIN { split(c, w, " ") } $3 == w[1] && $4 == w[2] && $5 == w[3] { n++ } END { print n + 0 }')
echo "loss plot: $nbg of $((LW * LH)) pixels have the background colour"
[ "$nbg" -ge $((LW * LH / 2)) ] || fail "the loss plot's background is missing"

# Samples: light text pixels on the dark panel.
read -r SX SY SW SH <<<"$(field samples 1) $(field samples 2) $(field samples 3) $(field samples 4)"
ntext=$(pixels "$SX" "$SY" "$SW" "$SH" | awk '($3 + $4 + $5) / 3 > 150 { n++ } END { print n + 0 }')
echo "samples: $ntext text pixels"
[ "$ntext" -ge 200 ] || fail "no sample text drawn"

# Status bar: its text stops short of the window's right edge (a narrow window drops pieces, the device first,
# rather than cutting a word in half): no text pixel in the last 8 columns, the window's padding.
read -r BX BY BW BH <<<"$(field status 1) $(field status 2) $(field status 3) $(field status 4)"
[ "${BW:-0}" -gt 0 ] || fail "no status bar in the layout"
nedge=$(pixels $((BX + BW - 8)) "$BY" 8 "$BH" | awk '($3 + $4 + $5) / 3 > 150 { n++ } END { print n + 0 }')
nbar=$(pixels "$BX" "$BY" "$BW" "$BH" | awk '($3 + $4 + $5) / 3 > 150 { n++ } END { print n + 0 }')
echo "status bar: $nbar text pixels, $nedge at the right edge"
[ "$nbar" -ge 300 ] || fail "no status bar text"
[ "$nedge" -eq 0 ] || fail "the status bar's text runs off the window's right edge"

# Fonts: tiny Shakespeare draws every character; a corpus of accented Latin, Greek, Cyrillic and CJK too (DejaVu Sans
# and Droid Sans Fallback merged into the pixel font, app/window/fonts.cpp); only its emoji, past U+FFFF, is said to draw as
# U+FFFD. (A '?' would be ambiguous: the corpus has real ones.)
! grep "draw as" "$OUT/stdout" || fail "tiny Shakespeare: characters said to have no glyph"
for i in $(seq 500); do printf 'caf\xc3\xa9 na\xc3\xafve \xce\xa9\xce\xbc\xce\xad\xce\xb3\xce\xb1 \xd0\xbf\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82 \xe4\xb8\xad\xe6\x96\x87 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x98\x80 Stra\xc3\x9fe\n'; done >"$OUT/uni.txt"
window_run 300 --exit-after-steps 2 --data "$OUT/uni.txt" \
    --preset single-head --eval-interval 2 --eval-iters 2 >"$OUT/uni.stdout" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$OUT/uni.stdout" >&2; fail "attnlab on a Unicode corpus exited $rc"; }
grep "draw as" "$OUT/uni.stdout"
grep -q "^attnlab: 1 of the corpus's 31 characters draw as .* (e.g. .* (U+1F600)): they are past U+FFFF" \
    "$OUT/uni.stdout" || fail "a Unicode corpus: want only the emoji without a glyph (scripts/setup.sh installs the fonts)"

# --exit-after-steps on a run that diverges first (training pauses): exit 2 with the reason, not a window that waits
# for ever
window_run 120 --exit-after-steps 100 --inject-fault nan@30 --data "$CORPUS" \
    --preset bigram --eval-iters 2 >"$OUT/nan.stdout" 2>"$OUT/nan.stderr"
rc=$?
[ $rc -eq 2 ] && grep -q "^error: The loss became NaN/Inf at step 30" "$OUT/nan.stderr" ||
    { cat "$OUT/nan.stdout" "$OUT/nan.stderr" >&2; fail "a diverged --exit-after-steps run: want exit 2 and the reason (got $rc)"; }

# --exit-after-steps (scripts, tests) never touches the user's autosave in the folder, not even with the last good
# state after a device failure: exit 2 with the error, the file as it was
mkdir -p "$OUT/keep" && echo "the user's run" >"$OUT/keep/attnlab_autosave.safetensors"
(cd "$OUT/keep" && window_run 120 --exit-after-steps 300 --inject-fault oom@150 \
    --data "$CORPUS" --preset bigram --eval-iters 2 >oom.stdout 2>oom.stderr)
rc=$?
[ $rc -eq 2 ] && grep -q "^error: the GPU ran out of memory" "$OUT/keep/oom.stderr" ||
    { cat "$OUT/keep/oom.stdout" "$OUT/keep/oom.stderr" >&2; fail "an --exit-after-steps run out of GPU memory: want exit 2 and the error (got $rc)"; }
[ "$(cat "$OUT/keep/attnlab_autosave.safetensors")" = "the user's run" ] ||
    fail "an --exit-after-steps run wrote over attnlab_autosave.safetensors"
echo "PASS"
