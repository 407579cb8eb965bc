# Sourced by the test scripts of command-line tools (the nanocc / nanocxx wrappers,
# nanort-info), which must keep their standard output and standard error apart: help on
# stdout, errors on stderr, each with its exit status.
#
#   run_command STATUS command...   runs it, its output kept apart; checks the exit status
#   expect_stdout TEXT              stdout is exactly TEXT and a newline (nothing if TEXT is '')
#   expect_stderr TEXT              the same for stderr
#   expect_stdout_of command...     stdout is exactly what the command prints
#   expect_stdout_line LINE         one of stdout's lines is exactly LINE
#   reject_stdout TEXT              no line of stdout holds TEXT
#   checks_done NAME                prints "NAME: passed" and exits 0, or "NAME: FAILED" and 1
#
# Every mismatch is printed (the command, what was expected, what came); checking goes on, so
# that one run shows all of them.
check_failures=0
check_command=""
check_dir=$(mktemp -d)
trap 'rm -rf "$check_dir"' EXIT

check_fail() {
  echo "mismatch for: $check_command"
  echo "  $1"
  check_failures=$((check_failures + 1))
}

run_command() {
  local expected=$1 status=0
  shift
  check_command=$(printf '%q ' "$@")
  "$@" > "$check_dir/stdout" 2> "$check_dir/stderr" || status=$?
  if [ "$status" -ne "$expected" ]; then
    check_fail "exit status $status, expected $expected; stdout and stderr:"
    cat "$check_dir/stdout" "$check_dir/stderr"
  fi
}

compare_stream() {
  local stream=$1 text=$2
  if [ -z "$text" ]; then
    : > "$check_dir/expected"
  else
    printf '%s\n' "$text" > "$check_dir/expected"
  fi
  if ! cmp -s "$check_dir/expected" "$check_dir/$stream"; then
    check_fail "$stream differs from the expected text (diff expected $stream):"
    diff -u "$check_dir/expected" "$check_dir/$stream" || true
  fi
}
expect_stdout() { compare_stream stdout "$1"; }
expect_stderr() { compare_stream stderr "$1"; }
expect_stdout_of() {
  "$@" > "$check_dir/expected_of" 2>&1
  if ! cmp -s "$check_dir/expected_of" "$check_dir/stdout"; then
    check_fail "stdout differs from the output of $* (diff expected stdout):"
    diff -u "$check_dir/expected_of" "$check_dir/stdout" || true
  fi
}

expect_stdout_line() {
  if ! grep -qFx -- "$1" "$check_dir/stdout"; then
    check_fail "no line of stdout is: $1"
    cat "$check_dir/stdout"
  fi
}

reject_stdout() {
  if grep -qF -- "$1" "$check_dir/stdout"; then
    check_fail "stdout holds: $1"
    grep -F -- "$1" "$check_dir/stdout"
  fi
}

checks_done() {
  if [ "$check_failures" -eq 0 ]; then echo "$1: passed"; exit 0; fi
  echo "$1: FAILED ($check_failures mismatch(es))"
  exit 1
}
