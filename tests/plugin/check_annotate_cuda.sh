#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then configures, builds and runs the project
# in annotate_cuda/ (nanort_annotate with CUDA kernels) against it.
#   check_annotate_cuda.sh <build-dir> <scratch-dir> [<C compiler> <C++ compiler>]
set -euo pipefail
build=$1 scratch=$2
compilers=()
if [ $# -ge 4 ]; then compilers=(-DCMAKE_C_COMPILER="$3" -DCMAKE_CXX_COMPILER="$4"); fi
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
quiet() { # runs a step, shows its output only when it fails
  if ! "$@" >"$scratch/step.log" 2>&1; then cat "$scratch/step.log"; echo "FAILED: $*"; exit 1; fi
}
quiet cmake -S "$here/annotate_cuda" -B "$scratch/consumer" -G Ninja \
      -DCMAKE_PREFIX_PATH="$scratch/prefix" "${compilers[@]}"
quiet cmake --build "$scratch/consumer"
export LD_LIBRARY_PATH="$scratch/prefix/lib:$scratch/prefix/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NANORT_OPENCL_CACHE="$scratch/opencl-program-cache" NANORT_CPU_WORKERS=2
"$scratch/consumer/cuda_multi_device"
"$scratch/consumer/cuda_kernels_cxx"
"$scratch/consumer/cuda_vector_types"
