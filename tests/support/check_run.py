#!/usr/bin/env python3
"""Runs a test's command and judges it on its exit status and its output together.

    check_run.py [--status N|nonzero] [--expect REGEX]... [--contains TEXT]...
                 [--reject REGEX]... [--count REGEX=N]... [--allow-sanitizer-reports]
                 -- command [argument...]

The test passes only when every condition holds:
  - the exit status is N (default 0); 'nonzero' accepts any failure that is an exit, not a
    signal (a crash is never the expected way to fail);
  - every --expect regular expression matches the output (stdout and stderr together; '.'
    matches newlines too, '^' and '$' match at every line) and every --contains text is in it;
  - no --reject expression matches, and no sanitizer report is in the output, whatever the
    exit status (a sanitizer told not to halt still fails the test; --allow-sanitizer-reports
    is for the tests of this script, whose commands are expected to report);
  - each --count expression matches exactly N times (e.g. one success line per MPI rank).
A command that exits with 77 while success was expected is passed through as a skip (ctest's
SKIP_RETURN_CODE 77), so that a test without its hardware keeps saying SKIP and why.

ctest's PASS_REGULAR_EXPRESSION ignores the exit status: a program that prints its success line
and then crashes at exit, leaks under LeakSanitizer or loses an MPI rank passes with it. Tests
use this script instead (tests/README.md).
"""
import argparse
import os
import re
import signal
import subprocess
import sys

SKIP_STATUS = 77

# What a sanitizer prints when it reports, whether or not it then stops the program.
SANITIZER_REPORTS = [
    r"^==\d+==ERROR: (Address|Leak|Memory)Sanitizer",
    r"^WARNING: ThreadSanitizer",
    r"^SUMMARY: \w+Sanitizer",
    r"^\S+:\d+:\d+: runtime error: ",  # UBSan
]


def parse_arguments(argv):
    if "--" not in argv:
        sys.exit("check_run.py: usage: check_run.py [options] -- command [argument...]")
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    if not command:
        sys.exit("check_run.py: no command after --")
    parser = argparse.ArgumentParser(prog="check_run.py")
    parser.add_argument("--status", default="0")
    parser.add_argument("--expect", action="append", default=[])
    parser.add_argument("--contains", action="append", default=[])
    parser.add_argument("--reject", action="append", default=[])
    parser.add_argument("--count", action="append", default=[])
    parser.add_argument("--allow-sanitizer-reports", action="store_true")
    arguments = parser.parse_args(options)
    if arguments.status != "nonzero" and not arguments.status.lstrip("-").isdigit():
        sys.exit("check_run.py: --status takes a number or 'nonzero', not " + arguments.status)
    counts = []
    for item in arguments.count:
        pattern, _, number = item.rpartition("=")
        if not pattern or not number.isdigit():
            sys.exit("check_run.py: --count takes REGEX=N, not " + item)
        counts.append((pattern, int(number)))
    arguments.count = counts
    return arguments, command


def describe(status):
    if status < 0:
        try:
            return "killed by signal " + signal.Signals(-status).name
        except ValueError:
            return "killed by signal %d" % -status
    return "exit status %d" % status


def main():
    arguments, command = parse_arguments(sys.argv[1:])
    sys.stdout.flush()
    try:
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as error:
        print("FAILED: cannot run %s: %s" % (command[0], error.strerror))
        return 1

    # ctest ends a test past its time limit with SIGTERM/SIGKILL to this script: take the
    # command with us rather than leave it running.
    def forward(number, _frame):
        child.send_signal(number)
        sys.exit(128 + number)
    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)

    chunks = []
    for chunk in iter(lambda: child.stdout.read1(65536), b""):
        sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
        chunks.append(chunk)
    status = child.wait()
    output = b"".join(chunks).decode("utf-8", errors="replace")

    flags = re.DOTALL | re.MULTILINE
    failures = []
    if arguments.status == "nonzero":
        if status == 0:
            failures.append("the command succeeded; it was expected to fail")
        elif status < 0:
            failures.append("the command was " + describe(status) + "; it was expected to "
                            "fail with an error")
    elif status != int(arguments.status):
        if status == SKIP_STATUS and arguments.status == "0":
            print("check_run.py: SKIP (the command exited with %d)" % SKIP_STATUS)
            return SKIP_STATUS
        failures.append("%s, expected exit status %s" % (describe(status), arguments.status))
    for pattern in arguments.expect:
        if not re.search(pattern, output, flags):
            failures.append("output does not match: " + pattern)
    for text in arguments.contains:
        if text not in output:
            failures.append("output does not contain: " + text)
    rejected = arguments.reject + ([] if arguments.allow_sanitizer_reports else SANITIZER_REPORTS)
    for pattern in rejected:
        found = re.search(pattern, output, flags)
        if found:
            failures.append("output matches %s: %s" % (pattern, found.group(0).splitlines()[0]))
    for pattern, number in arguments.count:
        seen = len(re.findall(pattern, output, flags))
        if seen != number:
            failures.append("output matches %s %d times, expected %d" % (pattern, seen, number))

    for failure in failures:
        print("FAILED (check_run.py): " + failure)
    if failures:
        return 1
    print("check_run.py: passed (%s, every expected output seen)" % describe(status))
    return 0


if __name__ == "__main__":
    sys.exit(main())
