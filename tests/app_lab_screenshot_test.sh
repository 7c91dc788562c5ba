#!/usr/bin/env bash
# Lab window smoke test: attnlab opens the Lab on a demo (ATTNLAB_LAB_DEMO) under Xvfb with validation on, trains a
# few steps, and the screenshot's Lab area (the "lab" line of FILE.png.layout) is checked for drawn text and numbers.
# Usage: app_lab_screenshot_test.sh PATH/TO/attnlab PATH/TO/corpus.txt [DEMO...]   (exit 0 pass, 1 fail, 77 skip)
set -u
BIN=${1:?usage: $0 attnlab corpus [demo...]}
CORPUS=${2:?usage: $0 attnlab corpus [demo...]}
shift 2
DEMOS=("${@:-matmul}")
. "$(dirname "$0")/window_session.sh"
need_tools xvfb-run convert identify awk

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for DEMO in "${DEMOS[@]}"; do
    PNG=$OUT/$DEMO.png
    ATTNLAB_LAB_DEMO=$DEMO window_run 600 --validation --exit-after-steps 5 \
        --screenshot "$PNG" --data "$CORPUS" --eval-interval 5 --eval-iters 2 >"$OUT/stdout" 2>"$OUT/stderr"
    rc=$?
    cat "$OUT/stdout"
    [ $rc -eq 0 ] || { cat "$OUT/stderr" >&2; fail "$DEMO: attnlab exited $rc (want 0)"; }
    nval=$(grep -c '\[validation\]' "$OUT/stderr")
    [ "$nval" -eq 0 ] || { grep '\[validation\]' "$OUT/stderr" | head -20 >&2; fail "$DEMO: $nval validation message(s)"; }
    [ -s "$PNG" ] || fail "$DEMO: no screenshot at $PNG"
    [ -s "$PNG.layout" ] || fail "$DEMO: no layout sidecar at $PNG.layout"
    colours=$(convert "$PNG" -format '%k' info:)
    [ "$colours" -gt 50 ] || fail "$DEMO: screenshot looks blank ($colours colours)"

    # The Lab's demo area: present, inside the window, and big enough to read.
    read -r WW WH <<<"$(awk '$1 == "window" { print $2, $3 }' "$PNG.layout")"
    read -r LX LY LW LH <<<"$(awk '$1 == "lab" { print $2, $3, $4, $5 }' "$PNG.layout")"
    [ -n "${LW:-}" ] || fail "$DEMO: no 'lab' line in $PNG.layout (is the Lab window open?)"
    [ "$LW" -ge 200 ] && [ "$LH" -ge 200 ] || fail "$DEMO: the Lab area is only ${LW}x${LH}"
    [ $((LX + LW)) -le "$WW" ] && [ $((LY + LH)) -le "$WH" ] || fail "$DEMO: the Lab area ends outside the window"

    # Text: light pixels on the Lab's dark, opaque background; the explanation alone gives thousands.
    ntext=$(convert "$PNG" -crop "${LW}x${LH}+${LX}+${LY}" +repage -alpha off txt:- |
        awk 'NR > 1 { c = $2; gsub(/[()]/, "", c); split(c, v, ","); if ((v[1] + v[2] + v[3]) / 3 > 150) n++ } END { print n + 0 }')
    echo "$DEMO: Lab area ${LW}x${LH}+${LX}+${LY}, $ntext text pixels"
    [ "$ntext" -ge 1500 ] || fail "$DEMO: too little text drawn in the Lab area ($ntext light pixels)"
done
echo "PASS"
