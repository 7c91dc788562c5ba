#!/usr/bin/env bash
# Prints step time, tokens/s and the ratio to PyTorch for every preset on this device (gpt: ATTN_BENCH_GPT=1).
# Usage: bench/run.sh [STEPS]   (builds first; set VK_ICD_FILENAMES or use a GPU machine to pick the device)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
build/attn_bench assets/tinyshakespeare.txt "${1:-300}"
