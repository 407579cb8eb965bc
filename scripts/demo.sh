#!/usr/bin/env bash
# Installs what is missing, builds the release preset and runs the main demo: a tiled Cholesky
# factorisation whose tasks and dependences run on the CPU workers, with the statistics summary.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake --preset release
cmake --build --preset release
echo
NANORT_STATS=1 build/release/apps/cholesky/cholesky "$@"
