#!/usr/bin/env bash
# Builds Attention Lab (installing what is missing) and runs the whole test suite with ctest.
# Extra arguments go to ctest, e.g. `-LE slow` to skip the long lecture runs. Tests run one per core; those that
# measure wall-clock time (the window's, the signals') run alone (RUN_SERIAL in tests/CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
