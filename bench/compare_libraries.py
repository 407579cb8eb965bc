#!/usr/bin/env python3
"""Two or more builds of libnanort side by side on one machine: task_overhead with each in turn.

    compare_libraries.py --task-overhead PATH --library NAME=DIR --library NAME=DIR
                         [--rounds N] [-- TASK_OVERHEAD_OPTIONS...]

Every round runs task_overhead once per library (loaded from DIR through LD_LIBRARY_PATH, which
a build tree's RUNPATH gives way to), in turn, the order reversed every other round so that a
machine that slows down or speeds up during the run weighs on all alike. The first library is
the baseline. For each pattern and thread count it prints the median over the rounds of each
round's best ns per task, and for each other library the median of its per-round ratios to the
baseline with their smallest and largest: on a shared machine the cost of the same build moves
by a quarter or more between rounds, and a ratio taken within a round cancels most of that.
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile


def fail(message, status=2):
    print(f"compare_libraries: {message}", file=sys.stderr)
    sys.exit(status)


def parse_arguments():
    parser = argparse.ArgumentParser(
        description="task_overhead with several builds of libnanort, alternated round by round")
    parser.add_argument("--task-overhead", required=True, help="the task_overhead program")
    parser.add_argument("--library", action="append", required=True, metavar="NAME=DIR",
                        help="a folder holding libnanort.so.0 (give two or more; the first "
                             "is the baseline)")
    parser.add_argument("--rounds", type=int, default=4, help="rounds (default 4)")
    parser.add_argument("options", nargs="*", help="after --: options for task_overhead")
    arguments = parser.parse_args()
    if arguments.rounds < 1:
        fail("--rounds needs a positive count")
    libraries = []
    for item in arguments.library:
        name, separator, folder = item.partition("=")
        if not separator or not name or not folder:
            fail(f"--library {item!r}: write NAME=DIR")
        if any(name == known for known, _ in libraries):
            fail(f"--library {item!r}: the name {name!r} is given twice")
        libraries.append((name, os.path.abspath(folder)))
    if len(libraries) < 2:
        fail("give at least two --library NAME=DIR")
    for option in ("--systems", "--csv"):
        if option in arguments.options:
            fail(f"{option} is this script's to set (nanort alone, and its own CSV file)")
    return arguments, libraries


def environment_for(folder):
    environment = dict(os.environ)
    environment["LD_LIBRARY_PATH"] = folder + (
        ":" + environment["LD_LIBRARY_PATH"] if environment.get("LD_LIBRARY_PATH") else "")
    return environment


def check_loads(program, name, folder):
    """The program must load libnanort from the folder given (an RPATH would win over it)."""
    wanted = os.path.join(folder, "libnanort.so.0")
    if not os.path.exists(wanted):
        fail(f"library {name}: {wanted} does not exist")
    listing = subprocess.run(["ldd", program], env=environment_for(folder), capture_output=True,
                             text=True)
    for line in listing.stdout.splitlines():
        if line.strip().startswith("libnanort.so.0 "):
            loaded = line.split("=>")[1].split("(")[0].strip() if "=>" in line else ""
            if loaded and os.path.realpath(loaded) == os.path.realpath(wanted):
                return
            fail(f"library {name}: {program} loads {loaded or 'no libnanort.so.0'}, "
                 f"not {wanted} (an RPATH in the program wins over LD_LIBRARY_PATH)")
    fail(f"library {name}: {program} does not load libnanort.so.0 ({listing.stderr.strip()})")


def run_once(program, options, folder, csv_path):
    """Best ns per task by (pattern, threads) for one run of task_overhead."""
    command = [program, *options, "--systems", "nanort", "--csv", csv_path]
    result = subprocess.run(command, env=environment_for(folder), capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-15:])
        fail(f"{' '.join(command)} exited with {result.returncode}:\n{tail}", status=1)
    best = {}
    with open(csv_path, newline="") as file:
        for row in csv.DictReader(file):
            if row["system"] == "nanort" and row["status"] == "measured":
                best[(row["pattern"], int(row["threads"]))] = float(row["best_ns"])
    if not best:
        fail(f"{' '.join(command)} measured nothing for nanort", status=1)
    return best


def main():
    arguments, libraries = parse_arguments()
    program = os.path.abspath(arguments.task_overhead)
    if not os.access(program, os.X_OK):
        fail(f"{program} is not a program")
    for name, folder in libraries:
        check_loads(program, name, folder)

    runs = {name: [] for name, _ in libraries}  # per library, one dict per round
    with tempfile.TemporaryDirectory() as scratch:
        csv_path = os.path.join(scratch, "run.csv")
        for round_number in range(arguments.rounds):
            order = libraries if round_number % 2 == 0 else list(reversed(libraries))
            for name, folder in order:
                runs[name].append(run_once(program, arguments.options, folder, csv_path))

    baseline = libraries[0][0]
    cells = sorted(set().union(*(set(r) for rounds in runs.values() for r in rounds)))
    print(f"task_overhead with {len(libraries)} libraries, {arguments.rounds} rounds "
          f"alternated; baseline {baseline}")
    print("median of each round's best ns per task; for the others, in brackets, the median "
          "of their per-round ratios to the baseline [smallest .. largest]")
    for pattern in sorted({pattern for pattern, _ in cells}):
        print(f"{pattern}:")
        for threads in sorted(t for p, t in cells if p == pattern):
            cell = (pattern, threads)
            line = f"  {threads:>3} threads"
            base = [r.get(cell) for r in runs[baseline]]
            for name, _ in libraries:
                values = [r.get(cell) for r in runs[name]]
                if None in values:
                    line += f"  {name} not measured in every round"
                    continue
                line += f"  {name} {statistics.median(values):8.1f}"
                if name != baseline and None not in base:
                    ratios = [v / b for v, b in zip(values, base)]
                    line += (f" ({statistics.median(ratios):.2f} "
                             f"[{min(ratios):.2f} .. {max(ratios):.2f}])")
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
