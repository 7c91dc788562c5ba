#!/usr/bin/env bash
# Builds Attention Lab (installing what is missing) and starts it on tiny Shakespeare. Extra arguments go to attnlab.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec build/attnlab "$@"
