#!/usr/bin/env bash
# Installs the build tree into a scratch prefix and runs run_suite.py on the small suite in
# fixture/ (programs written for this check, laid out as the mcxx checkout is): one passes,
# one builds and fails, one is refused by nanocc, one is ignored by its testinfo, and an
# OmpSs-2 one passes.   check_fixture.sh <build-dir> <scratch-dir>
set -euo pipefail
build=$1 scratch=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
export LD_LIBRARY_PATH="$scratch/prefix/lib:$scratch/prefix/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
python3 "$here/run_suite.py" --mcxx "$here/fixture" --prefix "$scratch/prefix" \
        --out "$scratch/out" --workers 1,2 -j 1
