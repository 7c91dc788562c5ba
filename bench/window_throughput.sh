#!/usr/bin/env bash
# Training throughput with the window open against headless: the same preset and steps, wall time per step
# end to end in both (evaluations, samples and, in the window, drawing included), under Xvfb.
#   bench/window_throughput.sh [--steps N] [--presets "P ..."] [--fps F] [--reps R]
# Prints per preset the medians of R runs (default 3; runs on a 2-core VM vary by +-15%): headless ms/step, the
# window's ms/step with save-CPU on (the default: unwatched, drawing takes at most 15% of the time) and off (always
# --fps frames a second), each ratio (window / headless throughput; the target is >= 75% at 30 fps) and the frame
# rate the window held. ATTN_PRESENT=swapchain measures Mesa's swapchain instead of the X11 shared-memory present.
# Needs build/attnlab and xvfb-run (apt-get install xvfb xauth).
set -euo pipefail
cd "$(dirname "$0")/.."
steps=3000 presets="single-head layernorm" fps=30 reps=3
while [ $# -gt 0 ]; do
    case "$1" in
        --steps) steps=$2; shift ;;
        --presets) presets=$2; shift ;;
        --fps) fps=$2; shift ;;
        --reps) reps=$2; shift ;;
        -h|--help) awk 'NR>1 && /^#/{sub(/^# ?/, ""); print; next} NR>1{exit}' "$0"; exit 0 ;;
        *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ -x build/attnlab ] || { echo "missing build/attnlab: build it with scripts/build.sh or ninja -C build attnlab" >&2; exit 2; }
command -v xvfb-run >/dev/null || { echo "xvfb-run is missing: apt-get install xvfb xauth" >&2; exit 2; }
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (timings need an idle machine)"
common="--max-iters $steps --eval-interval 1000 --eval-iters 20 --sample-chars 200"
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
echo "medians of $reps run(s) each, interleaved; present path: ${ATTN_PRESENT:-default (X11 shared memory on a CPU driver)}"
printf '%-12s %8s %14s %8s %14s %8s %8s\n' preset headless "window save-on" ratio "window $fps fps" ratio "fps"
for p in $presets; do
    hs="" ons="" offs="" fpss=""
    for ((r = 0; r < reps; r++)); do
        t0=$(date +%s.%N)
        build/attnlab --headless --quiet --preset "$p" $common >/dev/null
        t1=$(date +%s.%N)
        hs+=" $(awk -v a="$t0" -v b="$t1" -v n="$steps" 'BEGIN{printf "%.2f", (b-a)*1e3/n}')"
        for save in on off; do
            line=$(timeout 1800 xvfb-run -a -s "-screen 0 1280x800x24" build/attnlab --preset "$p" $common \
                   --exit-after-steps "$steps" --fps "$fps" --save-cpu "$save" --autosave 0 2>&1 | grep 'attnlab: drew') ||
                { echo "$p: the window run failed" >&2; exit 1; }
            ms=$(sed -E 's/.* ([0-9.]+) ms per step.*/\1/' <<<"$line")
            echo "   $p, save-CPU $save: $line" >&2
            if [ $save = on ]; then ons+=" $ms"; else
                offs+=" $ms"
                fpss+=" $(sed -E 's/.*drew ([0-9]+) frames during ([0-9]+) .*/\1 \2/' <<<"$line" |
                          awk -v ms="$ms" '{printf "%.1f", $1 / ($2 * ms / 1000)}')"
            fi
        done
    done
    h=$(median <<<"$hs") on=$(median <<<"$ons") off=$(median <<<"$offs") f=$(median <<<"$fpss")
    echo "   $p: headless$hs | save-CPU on$ons | off$offs (fps$fpss)" >&2
    printf '%-12s %8s %14s %8s %14s %8s %8s\n' "$p" "$h" "$on" "$(awk -v a="$h" -v b="$on" 'BEGIN{printf "%.0f%%", 100*a/b}')" \
        "$off" "$(awk -v a="$h" -v b="$off" 'BEGIN{printf "%.0f%%", 100*a/b}')" "$f"
done
