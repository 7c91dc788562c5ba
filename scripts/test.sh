#!/usr/bin/env bash
# Builds Attention Lab (installing what is missing) and runs the whole test suite with ctest.
# Extra arguments go to ctest, e.g. `-LE slow` to skip the long lecture runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests
ctest --test-dir build --output-on-failure "$@"
