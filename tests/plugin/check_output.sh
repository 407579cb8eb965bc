#!/usr/bin/env bash
# Runs a command that must fail, and checks that its output holds every expected line
# fragment (fixed strings). Used for errors at exact columns and for errors that another
# host compiler reports through the lowered source.
#   check_output.sh <fragment>... -- <command...>
set -uo pipefail
fragments=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do fragments+=("$1"); shift; done
shift
output=$("$@" 2>&1)
status=$?
echo "$output"
if [ $status -eq 0 ]; then echo "FAILED: the command succeeded"; exit 1; fi
for f in "${fragments[@]}"; do
  if ! grep -qF -- "$f" <<<"$output"; then echo "FAILED: missing: $f"; exit 1; fi
done
echo "all expected diagnostics seen"
