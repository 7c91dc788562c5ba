#!/usr/bin/env bash
# Side-by-side benchmark of Attention Lab (Vulkan, headless) and the PyTorch reference (bench/reference.py):
#   1. correctness: exports one training step with build/attn_export_step (single-head, layernorm, small GPT) and
#      replays it in PyTorch (bench/reference.py check): loss and every gradient must agree to 1e-4
#      (elementwise, absolute below 1, relative above) and to 1e-3 of each gradient tensor's largest value;
#   2. speed and quality: trains each preset with both, back to back, REPS times, and prints a table of tokens/s
#      (training steps only, evaluations excluded) and the final val loss; also written on top of bench/RESULTS.md
#      (the earlier runs kept below it).
#
# Usage: bench/compare_pytorch.sh [--quick] [--reps N] [--threads auto|1|2] [--presets "P ..."] [--no-gpt]
#                                 [--gpt-iters N] [--gpt-reps N] [--no-check] [--results FILE] [--torch-device D]
#   presets: single-head layernorm small-gpt gpt   (default: all four; small-gpt = gpt preset with n_embd 64,
#            4 heads, 4 layers, block 32, batch 16, dropout 0.2, lr 1e-3)
#   --quick       few iterations (a sanity run of seconds per small preset; gpt: 2 steps)
#   --reps N      repetitions of each pair of runs (default 3, --quick: 1); the table shows medians
#   --threads T   PyTorch threads; auto (default) measures 1 and 2 briefly per preset and keeps the faster (with
#                 OPENBLAS_CORETYPE unset, OpenBLAS's candidate kernels are probed the same way)
#   --no-gpt      skip the full-size gpt preset (slow: tens of seconds per step on 2 CPU cores, each program)
#   --gpt-iters N training steps for gpt (default 10, --quick 2; evaluations use 1 batch per split)
#   --gpt-reps N  repetitions for gpt (default 1)
#   --no-check    skip the gradient check
#   --torch-device D  where PyTorch trains: cpu (default) or cuda (a machine with a GPU: Attention Lab then runs
#                 on that GPU's Vulkan driver, PyTorch with CUDA on the same GPU; no thread probe)
# Needs: build/attnlab and build/attn_export_step (ninja -C build attnlab attn_export_step), python3-torch
# (bench/setup_pytorch.sh). Hyperparameters are the lecture's; iteration counts are reduced for timing (shown).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CMD="bench/compare_pytorch.sh $*"

quick=0 reps="" gpt_iters="" gpt_reps=1 threads=auto presets="single-head layernorm small-gpt gpt" check=1 results=bench/RESULTS.md torch_device=cpu
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --reps) reps=$2; shift ;;
        --threads) threads=$2; shift ;;
        --presets) presets=$2; shift ;;
        --no-gpt) presets=$(echo "$presets" | tr ' ' '\n' | grep -vx gpt | tr '\n' ' ') ;;
        --no-check) check=0 ;;
        --gpt-iters) gpt_iters=$2; shift ;;
        --gpt-reps) gpt_reps=$2; shift ;;
        --results) results=$2; shift ;;
        --torch-device) torch_device=$2; shift ;;
        -h|--help) awk 'NR>1 && /^#/{sub(/^# ?/, ""); print; next} NR>1{exit}' "$0"; exit 0 ;;
        *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$reps" ] || reps=$([ $quick = 1 ] && echo 1 || echo 3)
[ -n "$gpt_iters" ] || gpt_iters=$([ $quick = 1 ] && echo 2 || echo 10)
case "$threads" in auto|1|2|[0-9]*) ;; *) echo "--threads: auto or a number" >&2; exit 2 ;; esac
case "$torch_device" in cpu) ;; cuda*) [ "$threads" != auto ] || threads=1 ;; *) echo "--torch-device: cpu or cuda" >&2; exit 2 ;; esac

for b in build/attnlab build/attn_export_step; do
    [ -x "$b" ] || { echo "missing $b: build it with: ninja -C build attnlab attn_export_step" >&2; exit 2; }
done
# Debian's python3-torch belongs to /usr/bin/python3 (a pyenv/venv python3 on PATH would not see it)
PY=${PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=python3
"$PY" -c 'import torch, numpy' 2>/dev/null || { echo "PyTorch missing for $PY: run bench/setup_pytorch.sh (or set PYTHON)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- OpenBLAS's kernels ----------------------------------------------------------------------------------------
# OpenBLAS picks its kernels from the CPU model it recognises; Debian bookworm's 0.3.21 does not know some newer
# CPUs (an Intel Xeon with AVX-512 FP16 here) and falls back to "Prescott", its SSE3 kernels: 4-6x slower
# matmuls (1 thread: 31 against 141-189 GFLOP/s at 2048x384x1536). And which kernels are fastest depends on the
# shapes: on an AMD EPYC (Zen 5) the detected AVX-512 kernels ran gpt's big matmuls 40% faster than Haswell's AVX2
# ones, while the small GPT's probe picked Haswell's, the detected or SkylakeX on different runs. A fair comparison gives PyTorch its best for each preset:
# unless OPENBLAS_CORETYPE is set, each preset's probe (below) tries the detected kernels and those the CPU's flags
# allow (SkylakeX: AVX-512, Haswell: AVX2), with each thread count, and keeps the fastest pair.
openblas_note="" cores=(caller)
openblas_choose() {
    [ "$torch_device" = cpu ] || return 0
    local detected flags
    detected=$("$PY" -c 'import sys; sys.path.insert(0, "bench"); from reference import openblas_core; print(openblas_core() or "")' 2>/dev/null || true)
    if [ -z "$detected" ]; then openblas_note="PyTorch's BLAS is not OpenBLAS (or says no kernel set)"; return 0; fi
    detected_core=$detected
    if [ -n "${OPENBLAS_CORETYPE:-}" ]; then openblas_note="OpenBLAS kernels $detected (OPENBLAS_CORETYPE set by the caller; unset, the probe chooses per preset)"; return 0; fi
    cores=(default)
    flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
    grep -qw avx512f <<<"$flags" && [ "$detected" != SkylakeX ] && cores+=(SkylakeX)
    grep -qw avx2 <<<"$flags" && [ "$detected" != Haswell ] && cores+=(Haswell)
    if [ ${#cores[@]} -gt 1 ]; then
        openblas_note="OpenBLAS kernels chosen per preset by its probe among $detected (detected)$(printf ', %s' "${cores[@]:1}") (column \"PyTorch threads, kernels\")"
    else
        openblas_note="OpenBLAS kernels $detected (as detected)"
    fi
}
detected_core=""
openblas_choose
[ -z "$openblas_note" ] || echo "PyTorch: $openblas_note"
# core_env CORE: env's arguments that run PyTorch with those kernels (caller: as the caller set them)
core_env() {
    case "$1" in caller) ;; default) echo "-u OPENBLAS_CORETYPE" ;; *) echo "OPENBLAS_CORETYPE=$1" ;; esac
}
core_name() { case "$1" in caller|default) echo "$detected_core" ;; *) echo "$1" ;; esac; }  # as OpenBLAS reports them

# ---- per preset: model flags (the same for both programs) and the iteration schedule -------------------------
model_args() {
    case "$1" in
        single-head) echo "--preset single-head" ;;
        layernorm)   echo "--preset layernorm" ;;
        small-gpt)   echo "--preset gpt --n-embd 64 --n-head 4 --n-layer 4 --block-size 32 --batch-size 16 --dropout 0.2 --lr 1e-3" ;;
        gpt)         echo "--preset gpt" ;;
        *) echo "unknown preset $1" >&2; return 1 ;;
    esac
}
# the lecture: max_iters 5000, eval_interval 500, eval_iters 200 (gpt: the same, 5000 steps of ~B64xT256)
schedule() {   # -> "max_iters eval_interval eval_iters"
    if [ $quick = 1 ]; then
        case "$1" in
            single-head) echo "300 300 20" ;; layernorm) echo "200 200 10" ;; small-gpt) echo "100 100 5" ;; gpt) echo "$gpt_iters $gpt_iters 1" ;;
        esac
    else
        case "$1" in
            single-head) echo "5000 500 200" ;;   # the lecture's full run
            layernorm)   echo "1500 500 200" ;;
            small-gpt)   echo "500 250 100" ;;
            gpt)         echo "$gpt_iters $gpt_iters 1" ;;
        esac
    fi
}
batch_block() {   # -> "B T" as trained (for tokens per step)
    case "$1" in single-head|layernorm) echo "32 8" ;; small-gpt) echo "16 32" ;; gpt) echo "64 256" ;; esac
}
probe_iters() {   # brief PyTorch runs to choose 1 or 2 threads (and OpenBLAS's kernels)
    case "$1" in single-head) echo 300 ;; layernorm) echo 150 ;; small-gpt) echo 60 ;; gpt) echo 1 ;; esac
}
probe_timeout() {  # seconds for one probe; gpt's loads, evaluates 4 batches and trains a step: minutes on a CPU
    case "$1" in gpt) echo "${PROBE_TIMEOUT:-600}" ;; *) echo "${PROBE_TIMEOUT:-120}" ;; esac
}

# ---- helpers ----------------------------------------------------------------------------------------------------
# overall tokens/s of an attnlab metrics CSV: each row's tokens_per_s covers the steps since the previous row
csv_tps() { awk -F, 'NR==1{next} {d=$1-p; p=$1; if ($4>0 && d>0) {n+=d; t+=d/$4}} END{if (t>0) printf "%.1f", n/t; else print "nan"}' "$1"; }
csv_val() { tail -n 1 "$1" | cut -d, -f3; }
result_field() { sed -n "s/.*[[:space:]]$2=\([^[:space:]]*\).*/\1/p" "$1" | tail -n 1; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else printf "%.1f", (a[NR/2]+a[NR/2+1])/2}'; }
range() { tr ' ' '\n' | grep -v '^$' | sort -g | awk 'NR==1{lo=$1} {hi=$1} END{if (NR>1) printf "(%.0f-%.0f)", lo, hi}'; }

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
probe=$(build/attnlab --headless --preset single-head --max-iters 0 --eval-iters 1 --sample-chars 0 2>&1 || true)
device=$(grep -m1 'device:' <<<"$probe" | sed 's/.*device: *//' || true)
[ -n "$device" ] || device="(attnlab printed no device: line)"
# data parallelism on a CPU driver (Trainer::replicas_for): how many devices the small models' steps are split over
replicas=$(sed -n 's/^replicas: each step split over \([0-9]*\) devices.*/\1/p' <<<"$probe")
load=$(cut -d' ' -f1-3 /proc/loadavg)
if awk -v l="${load%% *}" 'BEGIN{exit !(l > 0.5)}'; then
    echo "warning: load average $load: other processes are running, the timings will be noisy (2 PyTorch threads suffer most)"
fi
torch_ver=$("$PY" -c 'import torch; print(torch.__version__)')
if [ "$torch_device" != cpu ]; then
    gpu=$("$PY" -c "import torch; print(torch.cuda.get_device_name('$torch_device'))" 2>/dev/null) || { echo "PyTorch sees no CUDA GPU ($torch_device)" >&2; exit 2; }
    torch_ver+=" on $torch_device ($gpu)"
fi
echo "machine: $(nproc) cores, $cpu; Vulkan: $device; torch $torch_ver"
echo "command: $CMD"
{
    echo "# Attention Lab vs PyTorch"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- machine: $(nproc) cores, $cpu"
    echo "- load average at start: $load"
    echo "- Vulkan device (attnlab): $device${LP_NUM_THREADS:+ (LP_NUM_THREADS=$LP_NUM_THREADS)}"
    echo "- replicas (attnlab, --replicas auto): each step of single-head, layernorm and small-gpt on ${replicas:-1} device(s)"
    echo "- PyTorch: $torch_ver, reference: bench/reference.py${openblas_note:+; $openblas_note}"
    echo "- command: \`$CMD\`"
    echo
} >"$tmp/results.md"

status=0

# ---- 1. correctness -------------------------------------------------------------------------------------------------
if [ $check = 1 ]; then
    echo
    echo "== gradient check (one step exported by attn_export_step, replayed in PyTorch float64/float32; dropout 0)"
    echo "## Gradient check" >>"$tmp/results.md"
    echo >>"$tmp/results.md"
    echo "One batch, dropout 0; pass if |ours - PyTorch float64| <= 1e-4 * max(1, |PyTorch|) for the loss and every gradient" >>"$tmp/results.md"
    echo "element, and max|ours - PyTorch float64| <= 1e-3 * max|PyTorch float64| per gradient tensor (worst: last column)." >>"$tmp/results.md"
    echo >>"$tmp/results.md"
    echo "| export | loss (ours) | loss (PyTorch f64) | result | max abs grad diff | worst diff / tensor scale |" >>"$tmp/results.md"
    echo "|---|---|---|---|---|---|" >>"$tmp/results.md"
    for spec in "single-head" "layernorm" "gpt n_embd=64 n_head=4 n_layer=4 block_size=32 batch_size=16"; do
        set -- $spec
        name=$1; shift
        label=$([ $# -gt 0 ] && echo "gpt (small: $*)" || echo "$name")
        f="$tmp/check-$name.safetensors"
        if ! build/attn_export_step "$name" "$f" assets/tinyshakespeare.txt "$@" >"$tmp/export.log" 2>&1; then
            echo "$label: export FAILED: $(cat "$tmp/export.log")"
            echo "| $label | export failed | | FAIL | | |" >>"$tmp/results.md"
            status=1; continue
        fi
        echo "--- $label"
        if "$PY" bench/reference.py check "$f" >"$tmp/check.log" 2>&1; then v=pass; else v=FAIL; status=1; fi
        if [ $v = FAIL ] || [ -n "${VERBOSE:-}" ]; then cat "$tmp/check.log"; else grep -E '^loss:|^largest|^RESULT' "$tmp/check.log"; fi
        r="$tmp/check.log"
        echo "| $label | $(result_field "$r" loss_ours) | $(result_field "$r" loss_torch) | $v | $(result_field "$r" max_abs_grad_diff) | $(result_field "$r" worst_rel_scale) ($(result_field "$r" worst_tensor)) |" >>"$tmp/results.md"
    done
    echo >>"$tmp/results.md"
fi

# ---- 2. speed and val loss -----------------------------------------------------------------------------------------
echo
echo "== training: Attention Lab and PyTorch back to back, $reps repetition(s) (gpt: $gpt_reps), medians (tokens/s: training steps only)"
[ $quick = 1 ] && echo "   --quick: few iterations, the val losses are far from converged"
[ "$torch_device" = cpu ] && echo "$presets" | grep -qw gpt && echo "   warning: the gpt preset (B64 x T256, 6 layers x 384) takes tens of seconds per step on 2 CPU cores: $gpt_iters steps x $gpt_reps rep(s) per program may take 10-30 minutes; --no-gpt skips it"
rows=()
for p in $presets; do
    n_reps=$reps
    [ "$p" != gpt ] || n_reps=$gpt_reps
    margs=$(model_args "$p") || { status=1; continue; }
    read -r iters interval eiters < <(schedule "$p")
    sargs="--max-iters $iters --eval-interval $interval --eval-iters $eiters"
    # the probe: brief PyTorch runs with each thread count (auto: 1 and 2) and each of OpenBLAS's candidate kernels;
    # gpt is probed too (a few minutes): small-gpt's choice does not carry over (1 thread is faster for the small
    # models, 2 for gpt's big matmuls: 462 against 598 tokens/s on the Intel VM)
    ths=$([ "$threads" = auto ] && echo "1 2" || echo "$threads")
    th=${ths%% *} core=${cores[0]}
    if [ "$torch_device" = cpu ] && [ $(( $(wc -w <<<"$ths") * ${#cores[@]} )) -gt 1 ]; then
        pi=$(probe_iters "$p")
        best=0
        for c in "${cores[@]}"; do
            for t in $ths; do
                # bounded: with other processes busy, 2 threads can be 30x slower than 1 (OpenMP spinning)
                if timeout "$(probe_timeout "$p")" env $(core_env "$c") "$PY" bench/reference.py train $margs --max-iters "$pi" --eval-interval "$pi" --eval-iters 1 --threads $t --quiet >"$tmp/probe.log" 2>&1; then
                    v=$(result_field "$tmp/probe.log" tokens_per_s)
                    echo "   $p: PyTorch probe ($pi steps) with $t thread(s), $(core_name "$c") kernels: $v tokens/s"
                    if awk -v a="$v" -v b="$best" 'BEGIN{exit !(a > b)}'; then best=$v; th=$t; core=$c; fi
                else
                    echo "   $p: PyTorch probe with $t thread(s), $(core_name "$c") kernels failed or took over $(probe_timeout "$p") s: $(tail -n 2 "$tmp/probe.log")"
                fi
            done
        done
        [ "$best" != 0 ] || echo "   $p: warning: every PyTorch probe failed: it runs with $th thread(s) and the $(core_name "$core") kernels, perhaps not its fastest"
    fi
    [ "$torch_device" != cpu ] || echo "   $p: PyTorch uses $th thread(s)$([ -n "$(core_name "$core")" ] && echo ", $(core_name "$core") kernels")"
    # the table's threads column too
    pt_where=$([ "$torch_device" = cpu ] && echo "$th thr$([ -n "$(core_name "$core")" ] && echo ", $(core_name "$core")")" || echo "$torch_device")
    al_tps="" pt_tps="" al_val="" pt_val="" al_wall="" pt_wall="" err=""
    for r in $(seq 1 "$n_reps"); do
        t0=$(date +%s.%N)
        if build/attnlab --headless --quiet --sample-chars 0 $margs $sargs --metrics "$tmp/al.csv" >"$tmp/al.log" 2>"$tmp/al.err"; then
            t1=$(date +%s.%N)
            al_tps+=" $(csv_tps "$tmp/al.csv")"; al_val=$(csv_val "$tmp/al.csv")
            al_wall+=" $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')"
        else
            err="attnlab failed: $(head -c 300 "$tmp/al.err")"
            echo "   $p: $err"
        fi
        t0=$(date +%s.%N)
        if env $(core_env "$core") "$PY" bench/reference.py train $margs $sargs --threads "$th" --device "$torch_device" --quiet >"$tmp/pt.log" 2>&1; then
            t1=$(date +%s.%N)
            pt_tps+=" $(result_field "$tmp/pt.log" tokens_per_s)"; pt_val=$(result_field "$tmp/pt.log" val_loss)
            pt_wall+=" $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')"
        else
            err="reference.py failed: $(tail -n 3 "$tmp/pt.log")"
            echo "   $p: $err"
        fi
        echo "   $p run $r/$n_reps: Attention Lab $(echo "$al_tps" | awk '{print $NF}') tokens/s, val $al_val; PyTorch ($pt_where) $(echo "$pt_tps" | awk '{print $NF}') tokens/s, val $pt_val"
    done
    [ -z "$err" ] || status=1
    a=$(echo "$al_tps" | median) b=$(echo "$pt_tps" | median)
    ratio=$(awk -v a="$a" -v b="$b" 'BEGIN{if (b+0 > 0 && a+0 > 0) printf "%.2f", a/b; else print "n/a"}')
    rows+=("$p|$iters|$(awk -v a="$a" 'BEGIN{printf "%.0f", a}') $(echo "$al_tps" | range)|$(awk -v b="$b" 'BEGIN{printf "%.0f", b}') $(echo "$pt_tps" | range)|${pt_where/ thr/}|$ratio|${al_val:-n/a}|${pt_val:-n/a}|$(echo "$al_wall" | median)|$(echo "$pt_wall" | median)")
done

header="preset|steps|Attention Lab tokens/s (median, range)|PyTorch tokens/s (median, range)|PyTorch threads, kernels (or device)|ratio AL/PT|val loss AL|val loss PT|wall s AL|wall s PT"
echo
if command -v column >/dev/null; then { echo "$header"; printf '%s\n' "${rows[@]}"; } | column -t -s '|'
else { echo "$header"; printf '%s\n' "${rows[@]}"; } | tr '|' '\t'; fi
{
    echo "## Training speed and loss"
    echo
    echo "$reps repetition(s) per preset (gpt: $gpt_reps), medians (range in parentheses: min-max). tokens/s counts training steps only"
    echo "(batch + forward + backward + AdamW), evaluations excluded; ratio > 1: Attention Lab faster. Val loss: last evaluation."
    echo "The lecture's hyperparameters; iterations reduced for timing$([ $quick = 1 ] && echo " (--quick)" || echo " (single-head: the full 5000)"):"
    echo
    for p in $presets; do
        read -r iters interval eiters < <(schedule "$p")
        echo "- $p: \`$(model_args "$p") --max-iters $iters --eval-interval $interval --eval-iters $eiters\` (lecture: 5000 iterations, eval_iters 200)"
    done
    echo
    echo "| ${header//|/ | } |"
    echo "|$(echo "$header" | sed 's/[^|]*/---/g')|"
    for r in "${rows[@]}"; do echo "| ${r//|/ | } |"; done
} >>"$tmp/results.md"
# earlier runs stay below this one, each under its own date
if [ -f "$results" ]; then
    prev_date=$(grep -m1 '^- date: ' "$results" | sed 's/^- date: //')
    { echo; echo "---"; echo; echo "# Previous run (${prev_date:-undated})"; tail -n +2 "$results"; } >>"$tmp/results.md"
fi
cp "$tmp/results.md" "$results"
echo
if [ $quick = 1 ]; then echo "--quick: iterations far below the lecture's 5000 (same hyperparameters); the table is also in $results"
else echo "iterations reduced for timing except single-head's full 5000 (same hyperparameters as the lecture); the table is also in $results"; fi
echo "total time: $((SECONDS / 60)) min $((SECONDS % 60)) s"
exit $status
