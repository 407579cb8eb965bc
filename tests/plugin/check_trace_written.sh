#!/usr/bin/env bash
# Runs a command with NANORT_TRACE=<trace> and then checks that the trace file was written as
# valid JSON with at least one task event; exits with the command's own status, so that the
# test checker judges that and the output (a failing program must still write its trace).
#   check_trace_written.sh <trace> <command...>
set -uo pipefail
trace=$1
shift
rm -f "$trace"
NANORT_TRACE=$trace "$@"
status=$?
if python3 -c 'import json, sys; events = json.load(open(sys.argv[1]))["traceEvents"]; sys.exit(not any(e.get("ph") == "X" for e in events))' "$trace" 2>/dev/null; then
  echo "trace written: $trace"
else
  echo "FAILED: no valid trace with task events in $trace"
fi
exit $status
