#!/usr/bin/env bash
# Soak test (not in CI): trains headless for MINUTES (default 30) and prints the process's resident memory
# and the GPU memory it holds at the start and the end, once a minute in between. Both should stay flat.
# Usage: scripts/soak.sh [MINUTES] [attnlab flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-30}
shift || true
[ -x build/attnlab ] || bash scripts/setup.sh >/dev/null
log=$(mktemp)
trap 'kill "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
build/attnlab --headless --quiet --preset "${SOAK_PRESET:-single-head}" --max-iters 100000000 --eval-interval 500 \
    --eval-iters 20 --sample-chars 0 "$@" >"$log" 2>&1 &
pid=$!
rss() { awk '/VmRSS/{print $2}' "/proc/$pid/status"; }
gpu() { grep -o 'GPU memory [0-9.]* MiB' "$log" | tail -1 | awk '{print $3}'; }
sleep 20
printf '%8s %12s %14s %s\n' minute "RSS MiB" "GPU MiB" "last eval"
start_rss=$(rss)
for ((m = 0; m <= minutes; m++)); do
    kill -0 "$pid" 2>/dev/null || { echo "attnlab exited early:"; cat "$log"; exit 1; }
    printf '%8d %12.1f %14s %s\n' "$m" "$(echo "$(rss)" | awk '{print $1/1024}')" "$(gpu)" "$(grep '^step' "$log" | tail -1 | cut -d'|' -f1)"
    [ "$m" -lt "$minutes" ] && sleep 60
done
end_rss=$(rss)
awk -v a="$start_rss" -v b="$end_rss" 'BEGIN{printf "resident memory: %.1f MiB -> %.1f MiB (%+.1f%%)\n", a/1024, b/1024, 100*(b-a)/a}'
