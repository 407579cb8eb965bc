#!/usr/bin/env python3
"""Runs the C test program with NANORT_TRACE=<file> and checks that the file is a valid
Chrome/Perfetto JSON trace: lane names, one complete ("X") event per task with its label,
sane times, and the pragma location as an argument.

usage: check_trace.py <program> <trace file to write>"""
import collections
import json
import os
import subprocess
import sys


def fail(message):
    print("FAILED: " + message)
    sys.exit(1)


def main():
    program, trace_path = sys.argv[1], sys.argv[2]
    if os.path.exists(trace_path):
        os.remove(trace_path)
    env = dict(os.environ, NANORT_TRACE=trace_path)
    run = subprocess.run([program], env=env, capture_output=True, text=True, timeout=240)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    if run.returncode != 0:
        fail("the program exited with %d" % run.returncode)
    if not os.path.exists(trace_path):
        fail("no trace file was written to " + trace_path)
    with open(trace_path, encoding="utf-8") as f:
        text = f.read()
    try:
        trace = json.loads(text)
    except json.JSONDecodeError as e:
        fail("the trace is not valid JSON: %s\n--- trace ---\n%s" % (e, text[:4000]))

    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        fail("no traceEvents list at the top level")
    events = trace["traceEvents"]
    lanes = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    if not any(name.startswith("cpu worker") for name in lanes.values()):
        fail("no CPU worker lane among %r" % sorted(lanes.values()))

    tasks = [e for e in events if e.get("ph") == "X"]
    names = collections.Counter(e.get("name") for e in tasks)
    expected = {"chain": 10, "fill": 8, "sum": 4, "parent": 1, 'odd "label"\\ with\ttab': 1}
    if dict(names) != expected:
        fail("task events by name %r, expected %r" % (dict(names), expected))
    for e in tasks:
        for key in ("pid", "tid", "ts", "dur", "args"):
            if key not in e:
                fail("event without %r: %r" % (key, e))
        if e["tid"] not in lanes:
            fail("event on a lane without a name: %r" % e)
        if not isinstance(e["ts"], (int, float)) or e["ts"] < 0:
            fail("bad ts in %r" % e)
        if not isinstance(e["dur"], (int, float)) or e["dur"] < 0:
            fail("bad dur in %r" % e)
        source = e["args"].get("source", "")
        if "c_program.c:" not in source:
            fail("event without its pragma location: %r" % e)
    print("trace OK: %d task events on %d lanes" % (len(tasks), len(lanes)))


if __name__ == "__main__":
    main()
