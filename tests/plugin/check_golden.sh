#!/usr/bin/env bash
# Golden test of the lowered source: lowers <source> (given relative to the current folder,
# as it appears in the #line markers) and compares with <expected>.
#   check_golden.sh <clang> <plugin> <include dir> <source> <expected> <output>
set -euo pipefail
clang=$1 plugin=$2 include=$3 source=$4 expected=$5 output=$6
mkdir -p "$(dirname "$output")"
"$clang" -fsyntax-only -fplugin="$plugin" -fplugin-arg-nanort-emit="$output" -I"$include" "$source"
if diff -u "$expected" "$output"; then
  echo "lowered source as expected"
else
  echo "FAILED: the lowered source differs from $expected (update it if the change is meant)"
  exit 1
fi
