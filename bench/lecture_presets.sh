#!/usr/bin/env bash
# Trains each of the lecture's middle presets with its default settings (headless) and prints a table:
# preset, val loss reached, the lecture's value, the target (lecture + 0.05), wall time.
# Usage: bench/lecture_presets.sh [PRESET...]   (default: multi-head feed-forward residual layernorm)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/attnlab ] || bash scripts/setup.sh >/dev/null
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(multi-head feed-forward residual layernorm)
declare -A lecture=([bigram]=2.50 [single-head]=2.40 [multi-head]=2.28 [feed-forward]=2.24 [residual]=2.08 [layernorm]=2.06 [gpt]=1.48)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-14s %10s %10s %10s %8s %10s\n' preset "val loss" lecture target ok "wall s"
for p in "${presets[@]}"; do
    start=$(date +%s.%N)
    build/attnlab --headless --quiet --preset "$p" --sample-chars 0 --metrics "$tmp/$p.csv" >/dev/null 2>"$tmp/err" || { echo "$p: $(cat "$tmp/err")"; continue; }
    end=$(date +%s.%N)
    val=$(tail -n 1 "$tmp/$p.csv" | cut -d, -f3)
    target=$(awk -v l="${lecture[$p]}" 'BEGIN{printf "%.2f", l + 0.05}')
    ok=$(awk -v v="$val" -v t="$target" 'BEGIN{print (v <= t) ? "yes" : "NO"}')
    printf '%-14s %10.4f %10s %10s %8s %10.1f\n' "$p" "$val" "${lecture[$p]}" "$target" "$ok" "$(awk -v a="$start" -v b="$end" 'BEGIN{print b - a}')"
done
