#!/usr/bin/env bash
# Compiles an annotated program with a wrapper (nanocc or nanocxx), then runs it.
#   run_program.sh <wrapper> <binary> <compiler arguments...>
# The host compiler comes from NANORT_CC / NANORT_CXX (default: clang 19 with the plugin).
set -euo pipefail
wrapper=$1 binary=$2
shift 2
mkdir -p "$(dirname "$binary")"
"$wrapper" "$@" -o "$binary"
exec "$binary"
