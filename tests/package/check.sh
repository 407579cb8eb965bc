#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then configures, builds and runs the consumer
# project against it. Usage: check.sh <build-dir> <scratch-dir>
set -euo pipefail
build=$1 scratch=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
cmake -S "$here" -B "$scratch/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/consumer" >/dev/null
export LD_LIBRARY_PATH="$scratch/prefix/lib:$scratch/prefix/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$scratch/consumer/consumer_c"
"$scratch/consumer/consumer_cxx"
