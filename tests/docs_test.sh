#!/usr/bin/env bash
# The README stays short and shows the app's own screenshot, and every relative link in the README and docs/
# points at a file that exists (a renamed page or picture breaks this, not a reader).
# Usage: docs_test.sh SOURCE_DIR
set -u
src=${1:?usage: $0 source_dir}
cd "$src" || exit 1
fails=0
bad=$(mktemp)
trap 'rm -f "$bad"' EXIT
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
n=$(wc -l <README.md)
[ "$n" -le 150 ] || fail "README.md has $n lines (at most 150: details belong in docs/)"
grep -q '!\[[^]]*\](docs/screenshot.png)' README.md || fail "README.md does not show docs/screenshot.png"
[ -s docs/screenshot.png ] || fail "docs/screenshot.png is missing (bash scripts/screenshot.sh makes it)"
for f in README.md docs/*.md; do
    dir=$(dirname "$f")
    # [text](target) and ![alt](target) with a relative target; anchors and web links left out
    grep -o '\](\([^)#]*\)[)#]' "$f" | sed 's/^](//; s/[)#]$//' | while read -r target; do
        case "$target" in http*|mailto:*|"") continue ;; esac
        [ -e "$dir/$target" ] || echo "FAIL: $f links to $target, which does not exist"
    done
done | tee "$bad"
[ -s "$bad" ] && fails=$((fails + 1))
[ "$fails" -eq 0 ] && echo "PASS: README.md $n lines with the screenshot; every relative link resolves"
[ "$fails" -eq 0 ]
