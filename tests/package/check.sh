#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then configures, builds and runs the consumer
# project against it, and the installed nanort-trace-summary on a trace of one of its programs.
#   check.sh <build-dir> <scratch-dir> [<C compiler> <C++ compiler>]
# The annotated programs (nanort_annotate) are run when the package has the plugin; with the
# project's default compiler (not clang 19) their pragmas are lowered by clang 19 and the
# lowered source compiled by that compiler; with clang 19 they are lowered in the compile.
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
quiet cmake -S "$here" -B "$scratch/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" \
      "${compilers[@]}"
quiet cmake --build "$scratch/consumer"
export LD_LIBRARY_PATH="$scratch/prefix/lib:$scratch/prefix/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The plain consumers' lines ("value 42") are printed last, once every program has passed:
# a test that matches them must not pass when an annotated program failed.
plain=$("$scratch/consumer/consumer_c")
plain+=$'\n'$("$scratch/consumer/consumer_cxx")
# The installed trace summary (bin/nanort-trace-summary, run as a command) on a trace of the C
# consumer; its lines come before the plain consumers' too.
NANORT_TRACE="$scratch/consumer_c.trace.json" "$scratch/consumer/consumer_c" > /dev/null
summary=$("$scratch/prefix/bin/nanort-trace-summary" "$scratch/consumer_c.trace.json")
if [ -e "$scratch/consumer/annotated_c" ]; then
  export NANORT_OPENCL_CACHE="$scratch/opencl-program-cache" NANORT_CPU_WORKERS=2
  "$scratch/consumer/annotated_c"
  "$scratch/consumer/annotated_c_lowered"
  "$scratch/consumer/annotated_cxx"
else
  echo "annotated programs: not built (the package has no pragma plugin)"
fi
if [ -e "$scratch/consumer/annotated_mpi" ]; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
    OMPI_MCA_btl_vader_single_copy_mechanism=none NANORT_CPU_WORKERS=1 \
    "$(cat "$scratch/consumer/mpiexec.txt")" -n 2 "$scratch/consumer/annotated_mpi"
fi
echo "$summary"
echo "$plain"
