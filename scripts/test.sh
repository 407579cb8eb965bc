#!/usr/bin/env bash
# Installs what is missing, builds, and runs the tests: the dev preset (all labels), then the
# ASan+UBSan preset. With --tsan, the TSan preset as well.
set -euo pipefail
cd "$(dirname "$0")/.."

tsan=0
for arg in "$@"; do
  case "$arg" in
    --tsan) tsan=1 ;;
    *) echo "usage: $0 [--tsan]" >&2; exit 2 ;;
  esac
done

scripts/install-deps.sh
jobs=$(nproc)

run_preset() {
  echo "== preset $1"
  cmake --preset "$1"
  cmake --build --preset "$1" -j "$jobs"
  ctest --preset "$1"
}

run_preset dev
run_preset asan-ubsan
if [ "$tsan" -eq 1 ]; then run_preset tsan; fi
echo "== all tests passed"
