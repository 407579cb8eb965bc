#!/usr/bin/env bash
# Runs a compile that must succeed, and compares its diagnostics (the 'file:line:column:
# warning|note|error:' lines and the parseable fix-its) with <expected>, line for line: every
# diagnostic there, at its line and column, and no other.
#   check_warnings.sh <expected> -- <command...>
set -uo pipefail
expected=$1
shift 2
output=$("$@" 2>&1)
status=$?
echo "$output"
if [ $status -ne 0 ]; then echo "FAILED: the command exited with status $status"; exit 1; fi
if diff -u "$expected" <(grep -E '^[^ :]+:[0-9]+:[0-9]+: (warning|note|error): |^fix-it:' <<<"$output"); then
  echo "diagnostics as expected"
else
  echo "FAILED: the diagnostics differ from $expected"
  exit 1
fi
