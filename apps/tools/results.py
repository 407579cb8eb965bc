#!/usr/bin/env python3
"""Table II and the scaling of the applications, from the results.txt files of run_apps.sh.

  results.py RESULTS.txt... [--write docs/results.md] [--plot docs/results-scaling.png]

For each file (one machine's run): the machine, date and command; Table II (median time of
each version on one GPU, and annotated / native for CUDA and for OpenCL; the mixed NBody is
compared with the native CUDA version); the speedup of each version on each GPU count over its
own time on one GPU; annotated / native on each GPU count; the first timed repetition after
the warm-up (and the warm-up) where the run printed them. A run of several rounds
(run_apps.sh --rounds) gives each version the median of its rounds' medians, the first
repetition of its slowest round, and a table of annotated / native round by round with the
median of those ratios. --write puts it all into the file
between the measured markers; --plot draws the speedups against the GPU count, a panel per
application and run (python3-matplotlib: scripts/install-deps.sh python3-matplotlib).
"""
import argparse
import pathlib
import re
import statistics
import sys

APPS = ["saxpy", "matmul", "nbody", "julia", "krist"]
VERSIONS = ["native_cuda", "annotated_cuda", "native_opencl", "annotated_opencl", "annotated_mixed",
            "starpu_opencl"]
NATIVE_OF = {"annotated_cuda": "native_cuda", "annotated_opencl": "native_opencl",
             "annotated_mixed": "native_cuda"}
BEGIN, END = "<!-- measured:begin -->", "<!-- measured:end -->"


def parse(path):
    run = {"path": path, "header": [], "failed": [], "times": {}, "sizes": {}, "first": {},
           "warmup": {}, "rounds": {}, "skipped": []}
    for line in pathlib.Path(path).read_text().splitlines():
        if line.startswith("# FAILED"):
            run["failed"].append(line[2:])
        elif line.startswith("# SKIP"):
            run["skipped"].append(line[2:])
        elif line.startswith("# "):
            run["header"].append(line[2:])
        elif line.startswith("gpus="):
            fields = dict(re.findall(r"(\w+)=(\S+)", line))
            if fields.get("check") != "ok":
                run["failed"].append("wrong results: " + line)
                continue
            key = (fields["app"], fields["version"], int(fields["gpus"]))
            by_round = run["rounds"].setdefault(key, {})
            by_round[int(fields.get("round", 1))] = float(fields["median_ms"])
            run["sizes"][fields["app"]] = fields["size"]
            # The first repetition of the slowest round (printed since 2026-11-26).
            if "first_ms" in fields and float(fields["first_ms"]) >= run["first"].get(key, 0):
                run["first"][key] = float(fields["first_ms"])
                if "warmup_ms" in fields:
                    run["warmup"][key] = float(fields["warmup_ms"])
    for key, by_round in run["rounds"].items():
        run["times"][key] = statistics.median(by_round.values())
    return run


def round_count(run):
    return max((len(r) for r in run["rounds"].values()), default=1)


def counts_of(run):
    return sorted({g for (_, _, g) in run["times"]})


def report(run):
    times, counts = run["times"], counts_of(run)
    text = [f"### {pathlib.Path(run['path']).stem}", ""]
    text += [f"- {h}" for h in run["header"]]
    text += ["", "Table II: median time per repetition on one GPU (ms), annotated / native "
             "(at most 1.02 is the target)" +
             (f"; the median of {round_count(run)} rounds' medians." if round_count(run) > 1
              else "."), "",
             "| application | size | " + " | ".join(VERSIONS) + " | annotated / native |",
             "| --- | --- |" + " ---: |" * len(VERSIONS) + " --- |"]
    for app in APPS:
        row = [times.get((app, v, 1)) for v in VERSIONS]
        if not any(row):
            continue
        ratios = []
        for v, native in NATIVE_OF.items():
            if (app, v, 1) in times and (app, native, 1) in times:
                ratios.append(f"{v.split('_')[1]} {times[(app, v, 1)] / times[(app, native, 1)]:.3f}")
        if (app, "annotated_opencl", 1) in times and (app, "starpu_opencl", 1) in times:
            ratios.append("opencl / starpu "
                          f"{times[(app, 'annotated_opencl', 1)] / times[(app, 'starpu_opencl', 1)]:.3f}")
        cells = [f"{t:.2f}" if t else "" for t in row]
        text.append(f"| {app} | {run['sizes'].get(app, '')} | " + " | ".join(cells) + " | " +
                    ", ".join(ratios) + " |")
    if len(counts) > 1:
        text += ["", "Speedup over the same version on one GPU (time on 1 / time on N).", "",
                 "| application | version | " + " | ".join(f"{g} GPU{'s' if g > 1 else ''}" for g in counts) + " |",
                 "| --- | --- |" + " ---: |" * len(counts)]
        for app in APPS:
            for v in VERSIONS:
                base = times.get((app, v, 1))
                if not base:
                    continue
                cells = [f"{base / times[(app, v, g)]:.2f}" if (app, v, g) in times else ""
                         for g in counts]
                text.append(f"| {app} | {v} | " + " | ".join(cells) + " |")
        text += ["", "Annotated / native on each GPU count (at most 1.02 is the target; the mixed "
                 "NBody against native CUDA).", "",
                 "| application | version | " + " | ".join(f"{g} GPU{'s' if g > 1 else ''}" for g in counts) + " |",
                 "| --- | --- |" + " ---: |" * len(counts)]
        for app in APPS:
            for v, native in NATIVE_OF.items():
                cells = [f"{times[(app, v, g)] / times[(app, native, g)]:.3f}"
                         if (app, v, g) in times and (app, native, g) in times else ""
                         for g in counts]
                if any(cells):
                    text.append(f"| {app} | {v} | " + " | ".join(cells) + " |")
    if round_count(run) > 1:
        text += ["", f"Annotated / native round by round ({round_count(run)} rounds, each running "
                 "every version once in turn): the median of the rounds' ratios, then each "
                 "round's (at most 1.02 is the target).", "",
                 "| application | version | GPUs | median | by round |",
                 "| --- | --- | ---: | ---: | --- |"]
        rounds = run["rounds"]
        for app in APPS:
            for v, native in NATIVE_OF.items():
                for g in counts:
                    mine, theirs = rounds.get((app, v, g), {}), rounds.get((app, native, g), {})
                    both = sorted(set(mine) & set(theirs))
                    if not both:
                        continue
                    ratios = [mine[r] / theirs[r] for r in both]
                    text.append(f"| {app} | {v} | {g} | {statistics.median(ratios):.3f} | " +
                                ", ".join(f"{x:.3f}" for x in ratios) + " |")
    if run["first"]:
        first, warmup = run["first"], run["warmup"]
        text += ["", "The first timed repetition after the warm-up (ms; the warm-up's own time in "
                 "parentheses where printed), and its ratio to the native version's median "
                 "(at most 1.25 is the target for CUDA)" +
                 ("; of each version's slowest round." if round_count(run) > 1 else "."), "",
                 "| application | version | " + " | ".join(f"{g} GPU{'s' if g > 1 else ''}" for g in counts) + " |",
                 "| --- | --- |" + " ---: |" * len(counts)]
        for app in APPS:
            for v in VERSIONS:
                cells = []
                for g in counts:
                    key = (app, v, g)
                    if key not in first:
                        cells.append("")
                        continue
                    cell = f"{first[key]:.1f}"
                    if key in warmup:
                        cell += f" ({warmup[key]:.0f})"
                    native = (app, NATIVE_OF.get(v, v), g)
                    if v in NATIVE_OF and native in times:
                        cell += f", {first[key] / times[native]:.2f}"
                    cells.append(cell)
                if any(cells):
                    text.append(f"| {app} | {v} | " + " | ".join(cells) + " |")
    if run["failed"]:
        text += ["", "Runs that failed:", ""] + [f"- {f}" for f in run["failed"]]
    if run["skipped"]:
        text += ["", "Runs skipped (no device of their kind):", ""] + [f"- {f}" for f in run["skipped"]]
    return "\n".join(text) + "\n"


def plot(runs, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("results.py: no matplotlib for this python (scripts/install-deps.sh "
                 "python3-matplotlib installs it for /usr/bin/python3)")
    # One row per run with several GPU counts, one panel per application: each version's
    # speedup over its own time on one GPU, against the GPU count (dashed: linear).
    rows = [r for r in runs if len(counts_of(r)) > 1] or runs
    apps = [a for a in APPS if any((a, v, 1) in r["times"] for r in rows for v in VERSIONS)]
    fig, axes = plt.subplots(len(rows), len(apps), figsize=(3.2 * len(apps), 3.0 * len(rows)),
                             squeeze=False)
    for row, run in zip(axes, rows):
        counts, times = counts_of(run), run["times"]
        machine = next((h for h in run["header"] if h.startswith("machine:")), run["path"])
        date = next((h for h in run["header"] if h.startswith("date:")), "")
        for ax, app in zip(row, apps):
            drawn = False
            for v in VERSIONS:
                points = [(g, times[(app, v, 1)] / times[(app, v, g)]) for g in counts
                          if (app, v, 1) in times and (app, v, g) in times]
                if points:
                    ax.plot([g for g, _ in points], [x for _, x in points], marker="o", label=v)
                    drawn = True
            if not drawn:  # an application this run did not measure
                ax.set_visible(False)
                continue
            ax.plot(counts, counts, color="grey", linestyle="--", linewidth=0.8)
            ax.set_xticks(counts)
            ax.set_title(f"{app}: {machine[len('machine: '):].split(' (')[0]}, "
                         f"{date[len('date: '):]}", fontsize=7)
            ax.set_xlabel("GPUs", fontsize=7)
            ax.set_ylabel("speedup over 1 GPU", fontsize=7)
            ax.tick_params(labelsize=7)
    legend = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    fig.legend(list(legend.values()), list(legend.keys()), loc="upper center",
               ncol=len(legend), fontsize=7)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / (3.0 * len(rows))))
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+")
    parser.add_argument("--write", metavar="FILE")
    parser.add_argument("--plot", metavar="PNG")
    args = parser.parse_args()
    runs = [parse(p) for p in args.results]
    text = "\n".join(report(r) for r in runs)
    print(text, end="")
    if args.write:
        path = pathlib.Path(args.write)
        doc = path.read_text()
        if BEGIN not in doc or END not in doc:
            sys.exit(f"results.py: {path} has no {BEGIN} ... {END} block")
        head, rest = doc.split(BEGIN, 1)
        path.write_text(head + BEGIN + "\n" + text + END + rest.split(END, 1)[1])
    if args.plot:
        plot(runs, args.plot)


if __name__ == "__main__":
    main()
