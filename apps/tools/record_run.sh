# Sourced by run_apps.sh and run_mpi.sh: what one run of an application printed.
#
#   record_run LOG STATUS WHAT PREFIX
#
# Appends to $results the run's RESULT line after PREFIX, or "# SKIP" (exit 77: the program
# found no device of its kind, and says so in LOG) or "# FAILED" (counted in $failures), both
# naming WHAT; prints a line of progress.
record_run() {
  local log=$1 status=$2 what=$3 prefix=$4 line
  line=$(grep '^RESULT ' "$log" | tail -n 1)
  if [ "$status" -eq 77 ]; then
    echo "# SKIP: $what: $(grep -m 1 SKIP "$log" | sed 's/^SKIP: //')" >>"$results"
  elif [ "$status" -ne 0 ] || [ -z "$line" ]; then
    echo "# FAILED (exit $status): $what, see logs/$(basename "$log")" >>"$results"
    failures=$((failures + 1))
  else
    echo "$prefix $line" >>"$results"
  fi
  echo "$what: ${line:-exit $status}"
}
