#!/usr/bin/env bash
# Installs what is missing, builds the release preset and runs the main demo: the blocked
# matmul of apps/matmul, annotated with pragmas and built through the plugin, whose tile
# products run on whatever the machine has (OpenCL devices, PoCL on a machine without GPU,
# CUDA GPUs, and the CPU workers: the dmda scheduler tries each and prefers the fastest). It
# checks the result and prints the statistics per device. Arguments go to the demo
# (--n=N --nb=NB --reps=R). Without the plugin (no Clang 19) it runs the tiled Cholesky on
# the CPU workers instead.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake --preset release
cmake --build --preset release
echo
if [ -x build/release/apps/matmul/matmul_demo ]; then
  NANORT_STATS=1 NANORT_SCHEDULER=dmda NANORT_PERF_MODEL=off build/release/apps/matmul/matmul_demo "$@"
else
  echo "(no pragma plugin: the tiled Cholesky on the CPU workers instead)"
  NANORT_STATS=1 build/release/apps/cholesky/cholesky
fi
