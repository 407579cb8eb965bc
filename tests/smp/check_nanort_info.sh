#!/usr/bin/env bash
# nanort-info's options, each case checked on its exit status, its stdout and its stderr, with
# the exact expected texts (tests/smp/nanort_info.cmake).
#   check_nanort_info.sh NANORT_INFO VERSION CASE
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../support/check_streams.sh"
info=$1 version=$2 case_name=$3
# Only the variables that a case sets.
for name in $(compgen -e | grep '^NANORT_' || true); do unset "$name"; done

usage="Usage: nanort-info [--env]

Prints what the nanort runtime sees on this machine: version, CPU topology, workers,
scheduling policies, devices, and the NANORT_ environment variables.

  --env       only the NANORT_ environment variables, without starting the runtime:
              each one's default, value and meaning; a malformed value and an unknown
              NANORT_ variable are flagged (exit status 1 when a value is malformed)
  --help, -h  print this text
  --version   print nanort's version"
policies="breadth-first, locality, dmda, energy"

case "$case_name" in
  help) # --help and -h: the usage on stdout, exit 0
    for form in --help -h; do
      run_command 0 "$info" "$form"
      expect_stdout "$usage"
      expect_stderr ""
    done
    ;;
  version)
    run_command 0 "$info" --version
    expect_stdout "nanort-info (nanort $version)"
    expect_stderr ""
    ;;
  unknown_option) # the usage on stderr, exit 2
    for form in --bogus -x env; do
      run_command 2 "$info" "$form"
      expect_stdout ""
      expect_stderr "nanort-info: unknown option '$form'
$usage"
    done
    ;;
  env) # valid values: each shown, none flagged, the runtime not started
    run_command 0 env NANORT_SCHEDULER=dmda NANORT_STATS=1 NANORT_STAGING_CHUNK=1M \
                "$info" --env
    expect_stdout_line "Environment variables:"
    expect_stdout_line "  NANORT_CPU_WORKERS       default logical CPUs   now (unset)"
    expect_stdout_line "  NANORT_SCHEDULER         default breadth-first  now dmda"
    expect_stdout_line "  NANORT_STATS             default 0              now 1"
    expect_stdout_line "  NANORT_STAGING_CHUNK     default 16M            now 1M"
    reject_stdout "MALFORMED"
    reject_stdout "UNKNOWN"
    reject_stdout "Machine:"
    expect_stderr ""
    ;;
  env_malformed) # each malformed value marked with the runtime's reason; exit 1
    run_command 1 env NANORT_SCHEDULER=bogus NANORT_CPU_WORKERS=0 NANORT_AFFINITY=gemm:cuda=0 \
                NANORT_STATS=1 "$info" --env
    expect_stdout_line "  NANORT_SCHEDULER         default breadth-first  now bogus   <- MALFORMED"
    expect_stdout_line "      MALFORMED: NANORT_SCHEDULER='bogus' names no policy (known: $policies)"
    expect_stdout_line "  NANORT_CPU_WORKERS       default logical CPUs   now 0   <- MALFORMED"
    expect_stdout_line "      MALFORMED: NANORT_CPU_WORKERS='0' is not an integer in [1, 4096]"
    expect_stdout_line "  NANORT_AFFINITY          default (none)         now gemm:cuda=0   <- MALFORMED"
    expect_stdout_line "      MALFORMED: NANORT_AFFINITY: the score '0' of gemm on cuda is not a positive number"
    expect_stdout_line "  NANORT_STATS             default 0              now 1"
    expect_stdout_line "3 malformed value(s): the runtime refuses to start with them"
    expect_stderr ""
    # Without --env the runtime does not start, and says why.
    run_command 1 env NANORT_SCHEDULER=bogus "$info"
    expect_stdout ""
    expect_stderr "nanort-info: the runtime does not start: NANORT_SCHEDULER='bogus' names no policy (known: $policies)
(nanort-info --env checks every NANORT_ variable)"
    ;;
  env_unknown) # a NANORT_ variable that the runtime does not know: flagged, a close name named
    run_command 0 env NANORT_CPU_WROKERS=2 NANORT_SHEDULER=dmda NANORT_COLOUR=blue \
                "$info" --env
    expect_stdout_line "Unknown NANORT_ variables (the runtime ignores them):"
    expect_stdout_line "  NANORT_CPU_WROKERS=2   <- UNKNOWN: did you mean NANORT_CPU_WORKERS?"
    expect_stdout_line "  NANORT_SHEDULER=dmda   <- UNKNOWN: did you mean NANORT_SCHEDULER?"
    expect_stdout_line "  NANORT_COLOUR=blue   <- UNKNOWN"
    reject_stdout "MALFORMED"
    expect_stderr ""
    ;;
  *) echo "check_nanort_info.sh: unknown case '$case_name'" >&2; exit 2 ;;
esac
checks_done "$case_name"
