#!/usr/bin/env bash
# Runs a command that must fail with an error, and checks that its output holds every expected
# line fragment (fixed strings). Used for errors at exact columns and for errors that another
# host compiler reports through the lowered source. Exits 0 only then: a command that succeeds,
# is killed by a signal or crashes a compiler fails the test.
#   check_output.sh <fragment>... -- <command...>
set -uo pipefail
fragments=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do fragments+=("$1"); shift; done
shift
output=$("$@" 2>&1)
status=$?
echo "$output"
if [ $status -eq 0 ]; then echo "FAILED: the command succeeded"; exit 1; fi
if [ $status -gt 128 ]; then echo "FAILED: the command was killed by signal $((status - 128))"; exit 1; fi
if grep -qE -- "PLEASE submit a bug report|Stack dump:|Sanitizer" <<<"$output"; then
  echo "FAILED: the command crashed or a sanitizer reported"; exit 1
fi
for f in "${fragments[@]}"; do
  if ! grep -qF -- "$f" <<<"$output"; then echo "FAILED: missing: $f"; exit 1; fi
done
echo "all expected diagnostics seen"
