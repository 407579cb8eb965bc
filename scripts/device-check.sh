#!/usr/bin/env bash
# Runs the device tests and benchmarks of a build made elsewhere, on a machine with GPUs that
# has neither the compilers nor the libraries of the build machine (see bench/README.md):
#
#   scripts/device-check.sh BUILD_DIR LIB_DIR OUT_DIR [ctest label regex]
#
# LIB_DIR holds the shared libraries the build needs that the machine lacks (libtbb.so.12 ...)
# and CMake's GoogleTestAddTests.cmake. CTEST_JOBS: tests run at once (default 4);
# CTEST_EXCLUDE_LABELS: a label regex of tests left out. Where clang-19 is missing, the tests
# that compile programs with the plugin (label plugin) are left out too, and the log says so.
# Logs go to OUT_DIR: ctest output, nanort-info, the OpenCL benchmark.
set -uo pipefail
build=$(realpath "$1"); libs=$(realpath "$2"); out=$3; labels=${4:-unit|opencl|cuda}
mkdir -p "$out"
export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# ctest files name the source and build folders by their absolute paths on the build machine.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
bin=$(sed -n 's/^# Build directory: //p' "$build/CTestTestfile.cmake")
here=$(cd "$(dirname "$0")/.." && pwd)
if [ "$src" != "$here" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$here" "$src"; fi
if [ "$bin" != "$build" ] && [ ! -e "$bin" ]; then mkdir -p "$(dirname "$bin")" && ln -s "$build" "$bin"; fi

# gtest_discover_tests lists the tests at ctest time with a module of the build machine's
# CMake, named by its absolute path: bring the copy carried in LIB_DIR there if it is missing.
module=$(sed -n 's/^ *include("\(.*GoogleTestAddTests.cmake\)")$/\1/p' "$build"/tests/*_include.cmake | head -n 1)
if [ -n "$module" ] && [ ! -e "$module" ] && [ -e "$libs/GoogleTestAddTests.cmake" ]; then
  mkdir -p "$(dirname "$module")" && cp "$libs/GoogleTestAddTests.cmake" "$module"
fi
# The lists ctest made on the build machine (without GPUs: the OpenCL tests of its CPU device
# alone) would be used again as they are: made here instead, with this machine's devices.
rm -f "$build"/tests/*_tests.cmake
# A GPU machine must have its backends: every program of the tests fails at start, with the
# backend's error, where CUDA or NVIDIA's OpenCL does not come up, instead of skipping
# (NANORT_REQUIRE, docs/configuration.md). Set NANORT_REQUIRE beforehand to require otherwise.
if [ -z "${NANORT_REQUIRE+x}" ] && command -v nvidia-smi >/dev/null; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  if [ "$gpus" -gt 0 ]; then export NANORT_REQUIRE="cuda:$gpus,opencl-gpu:$gpus"; fi
fi
echo "NANORT_REQUIRE=${NANORT_REQUIRE:-}" > "$out/require.txt"
# Tests at once: NVIDIA GPUs in an exclusive compute mode take one process at a time.
jobs=${CTEST_JOBS:-4}

"$build/nanort/nanort-info" > "$out/nanort-info.txt" 2>&1
NANORT_OPENCL_DEVICES=all "$build/nanort/nanort-info" > "$out/nanort-info-all.txt" 2>&1
exclude=${CTEST_EXCLUDE_LABELS:-}
if ! command -v clang-19 >/dev/null; then
  exclude=${exclude:+$exclude|}plugin
  echo "clang-19 is missing: tests labelled plugin (they compile programs) left out" \
    > "$out/excluded.txt"
fi
exclude_args=()
[ -n "$exclude" ] && exclude_args=(-LE "$exclude")
status=0
ctest --test-dir "$bin" -L "$labels" "${exclude_args[@]}" -j"$jobs" --output-on-failure \
  > "$out/ctest.txt" 2>&1 || status=1
NANORT_OPENCL_DEVICES=all ctest --test-dir "$bin" -L opencl "${exclude_args[@]}" -j"$jobs" \
  --output-on-failure > "$out/ctest-all-opencl-devices.txt" 2>&1 || status=1
if [ -x "$build/bench/opencl_bench" ]; then
  NANORT_OPENCL_DEVICES=all "$build/bench/opencl_bench" > "$out/opencl_bench.txt" 2>&1 || status=1
fi
tail -n 3 "$out"/ctest*.txt
exit $status
