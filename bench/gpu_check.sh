#!/usr/bin/env bash
# The checks for a lent GPU machine (a workplace's `device` tool: a bare Ubuntu machine with an NVIDIA GPU, its
# driver and PyTorch CUDA, no Vulkan loader, no network), prepared here and run there in one call:
#
#   bash bench/gpu_check.sh prepare   # here, after scripts/setup.sh: puts what that machine lacks into .gl/ (Debian's
#                                     # Vulkan loader and GL dispatch packages) and .devlibs/ (the shared libraries
#                                     # attnlab links, the Khronos validation layer), both ignored by git
#   bash bench/gpu_check.sh run       # there, carrying: build assets/tinyshakespeare.txt .gl .devlibs
#   bash bench/gpu_check.sh nanogpt   # there, the same carried: nanogpt-char's 5000 steps, in a call of its own
#   bash bench/gpu_check.sh timelapse # there, the same carried: the time-lapse's cost and bf16 difference on gpt
#   bash bench/gpu_check.sh heads     # there, the same carried: gpt's head scores on tiny Shakespeare, step by step
#
# `run` stops at once if attnlab finds no Vulkan device; else, with logs in $OUT (or out/): the engine tests with the
# validation layer on (kernels against CPU references, gradients, checkpoints, labs), the gpt preset's --profile
# over 40 steps, bench/compare_pytorch.sh against PyTorch CUDA on the same GPU (one repetition of each preset), and
# the lecture's stages trained to their val losses. About 5 minutes on an H200 (2026-12-04); the stages' time limits
# add up to 9 minutes, inside the 10 a call may take. Results go by hand into bench/RESULTS-GPU.md.
set -uo pipefail
cd "$(dirname "$0")/.."

prepare() {
    set -e
    [ -x build/attnlab ] && [ -x build/attn_tests ] || { echo "build first: bash scripts/setup.sh" >&2; exit 2; }
    [ -f assets/tinyshakespeare.txt ] || { echo "assets/tinyshakespeare.txt missing: bash scripts/setup.sh" >&2; exit 2; }
    mkdir -p .git/info
    for d in /.gl/ /.devlibs/; do grep -qxF "$d" .git/info/exclude 2>/dev/null || echo "$d" >>.git/info/exclude; done
    rm -rf .gl .devlibs && mkdir -p .gl .devlibs/layers /tmp/amd64/partial
    local o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
    apt-get $o update >/dev/null
    # the loader alone is not enough: NVIDIA's Vulkan driver (libGLX_nvidia) needs the GL dispatch libraries too
    (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 2>&1 | grep -v unsandboxed)
    # attnlab's shared libraries beyond the C/C++ runtime and the loader (GLFW and X11 even headless)
    ldd build/attnlab | awk '$3 ~ /^\// {print $3}' |
        grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libvulkan|ld-linux[^/]*|libdl|libpthread|librt)\.so' |
        while read -r l; do cp -L "$l" .devlibs/; done
    cp -L /usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so .devlibs/layers/
    sed 's|"library_path": "libVkLayer_khronos_validation.so"|"library_path": "./libVkLayer_khronos_validation.so"|' \
        /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json >.devlibs/layers/VkLayer_khronos_validation.json
    du -sh build .gl .devlibs assets/tinyshakespeare.txt
    echo "prepared: run 'bash bench/gpu_check.sh run' there, carrying build assets/tinyshakespeare.txt .gl .devlibs (64 MiB at most)"
}

# There: the Vulkan loader and attnlab's libraries in place, and a Vulkan device found (else exit 3).
there() {
    local icd
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
    export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export VK_LAYER_PATH=$PWD/.devlibs/layers ATTN_CORPUS=$PWD/assets/tinyshakespeare.txt
    icd=$(find /usr/local/nvidia /usr/share/vulkan /etc/vulkan -name 'nvidia_icd*.json' 2>/dev/null | head -n 1)
    [ -z "$icd" ] || export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
    if ! timeout 60 build/attnlab --headless --preset single-head --max-iters 10 --eval-interval 10 --eval-iters 1 --sample-chars 0 \
            --data assets/tinyshakespeare.txt; then
        echo "no Vulkan device: the loader's view follows"
        VK_LOADER_DEBUG=error,driver timeout 60 build/attnlab --headless --preset single-head --max-iters 0 --eval-iters 1 \
            --data assets/tinyshakespeare.txt 2>&1 | tail -n 20
        exit 3
    fi
}

run() {
    local out=${OUT:-out} t
    mkdir -p "$out"
    there
    t=$SECONDS
    timeout 180 build/attn_tests "[ops],[model],[checkpoint],[dataset],[lab]" >"$out/tests.log" 2>&1
    echo "tests: exit $? in $((SECONDS - t)) s"; tail -n 4 "$out/tests.log"
    t=$SECONDS
    timeout 60 build/attnlab --headless --preset gpt --max-iters 40 --eval-interval 40 --eval-iters 2 --sample-chars 200 \
        --profile --data assets/tinyshakespeare.txt >"$out/gpt_profile.log" 2>&1
    echo "gpt --profile: exit $? in $((SECONDS - t)) s"; grep -E '^(step|wall)' "$out/gpt_profile.log"
    t=$SECONDS
    PYTHON=python3 timeout 200 bench/compare_pytorch.sh --torch-device cuda --reps 1 \
        --presets "gpt small-gpt single-head layernorm" --gpt-iters 20 --no-check --results "$out/compare.md" \
        >"$out/compare.log" 2>&1
    echo "compare_pytorch.sh: exit $? in $((SECONDS - t)) s"; grep -A6 '^preset' "$out/compare.log"
    t=$SECONDS
    timeout 60 build/attn_tests "[lecture-single-head],[lecture-bigram],[lecture-presets]" >"$out/lecture.log" 2>&1
    echo "lecture stages: exit $? in $((SECONDS - t)) s"; grep -E 'after|passed|failed' "$out/lecture.log" | sort -u
}

# nanoGPT's shakespeare_char run (--preset nanogpt-char: 5000 steps, an estimate of 200 batches every 250) to its
# val loss (nanoGPT's README: 1.4697; the target <= 1.50), with its metrics in $OUT. Its own call: about 7 minutes
# on an H200 if it trains as fast as the gpt preset there (tokens/s in RESULTS-GPU.md); cut at 9.
nanogpt() {
    local out=${OUT:-out} t
    mkdir -p "$out"
    there
    t=$SECONDS
    timeout 540 build/attnlab --headless --preset nanogpt-char --data assets/tinyshakespeare.txt --sample-chars 300 \
        --metrics "$out/nanogpt_char.csv" >"$out/nanogpt_char.log" 2>&1
    echo "nanogpt-char: exit $? in $((SECONDS - t)) s (124: cut at 540 s)"
    grep -E '^step' "$out/nanogpt_char.log" | tail -n 6
}

# The time-lapse on gpt (issue "Any text, any step"): what recording costs a run as a share of its time, and the
# largest difference bf16 weights make to a replayed attention weight (gpt keeps its weights in bf16), after 1000
# steps of every lecture preset and gpt (attn_bench_timelapse). Its own call: about 2 minutes on an H200.
timelapse() {
    local out=${OUT:-out} t
    mkdir -p "$out"
    there
    t=$SECONDS
    ATTN_BENCH_GPT=1000 timeout 540 build/attn_bench_timelapse assets/tinyshakespeare.txt 1000 >"$out/timelapse.log" 2>&1
    echo "attn_bench_timelapse: exit $? in $((SECONDS - t)) s"; cat "$out/timelapse.log"
}

# The gpt preset's heads on tiny Shakespeare (issue "Circuits", for docs/induction.md): its 5000 steps saved with
# the time-lapse, then every head's scores at each recorded step (inspect --heads --step) and the in-context learning
# score at each (inspect --icl), the logs in $OUT. Its own call: about 6 minutes on an H200 (the training 4.5).
heads() {
    local out=${OUT:-out} t s ck=/tmp/gpt_heads.safetensors
    mkdir -p "$out"
    there
    t=$SECONDS
    # cut at 420 s, a run still saves the step it reached (SIGTERM), which inspect reads as well
    timeout 420 build/attnlab --headless --preset gpt --data assets/tinyshakespeare.txt --sample-chars 300 \
        --save "$ck" --metrics "$out/gpt.csv" >"$out/gpt_train.log" 2>&1
    echo "gpt: exit $? in $((SECONDS - t)) s (124: cut at 420 s)"; grep -E '^step' "$out/gpt_train.log" | tail -n 3
    build/attnlab inspect "$ck" --list >"$out/gpt_list.log" 2>&1
    for s in $(awk '$1 ~ /^[0-9]+$/ {print $1}' "$out/gpt_list.log"); do
        echo "== step $s"
        timeout 60 build/attnlab inspect "$ck" --heads --step "$s"
    done >"$out/gpt_heads.log" 2>&1
    grep -E '^== step|^strongest' "$out/gpt_heads.log"
    t=$SECONDS
    timeout 120 build/attnlab inspect "$ck" --icl >"$out/gpt_icl.log" 2>&1
    echo "inspect --icl: exit $? in $((SECONDS - t)) s"; tail -n 4 "$out/gpt_icl.log"
}

case "${1:-}" in
    prepare) prepare ;;
    run) run ;;
    nanogpt) nanogpt ;;
    timelapse) timelapse ;;
    heads) heads ;;
    *) awk 'NR>1 && /^#/{sub(/^# ?/, ""); print; next} NR>1{exit}' "$0"; exit 2 ;;
esac
