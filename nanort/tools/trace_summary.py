#!/usr/bin/env python3
"""Where the time went in a NANORT_TRACE file: per lane and per task label, in text.

  nanort-trace-summary TRACE.json [--gap-us 50] [--split-ms 2] [--gaps]

(installed as bin/nanort-trace-summary; nanort/tools/trace_summary.py in the source tree)

- Runs: stretches of activity separated by at least --split-ms with nothing running on any
  lane (the repetitions of a benchmark, say), with their spans.
- Lanes (CPU workers, devices): tasks, busy time (the union of the lane's task slices: tasks
  in flight together on a device count once), idle gaps of at least --gap-us between the
  lane's first and last task (count, total, longest and when), and on device lanes the copies
  (count and MiB, by direction). --gaps lists every such gap.
- Task labels: count, total and mean time.
Times are in ms from the first event.
"""
import argparse
import collections
import json
import sys


def union(intervals):
    """Merged (start, end) intervals, sorted."""
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--gap-us", type=float, default=50.0)
    parser.add_argument("--split-ms", type=float, default=2.0)
    parser.add_argument("--gaps", action="store_true", help="list every gap")
    args = parser.parse_args()
    try:
        with open(args.trace) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"trace_summary.py: cannot read {args.trace}: {e}")
    events = data["traceEvents"] if isinstance(data, dict) else data
    names = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    slices = [e for e in events if e.get("ph") == "X"]
    instants = [e for e in events if e.get("ph") == "i"]
    if not slices:
        sys.exit(f"trace_summary.py: {args.trace} has no task slices")
    t0 = min(e["ts"] for e in slices + instants)
    ms = lambda us: (us - t0) / 1000.0

    everything = union((e["ts"], e["ts"] + e.get("dur", 0)) for e in slices)
    runs = [list(everything[0])]
    for start, end in everything[1:]:
        if start - runs[-1][1] >= args.split_ms * 1000:
            runs.append([start, end])
        else:
            runs[-1][1] = end
    span = everything[-1][1] - everything[0][0]
    print(f"{args.trace}: {len(slices)} task slices over {span / 1000:.3f} ms; "
          f"{len(runs)} run(s) apart by {args.split_ms:g} ms or more of nothing running:")
    for k, (start, end) in enumerate(runs):
        print(f"  run {k}: {ms(start):10.3f} to {ms(end):10.3f}  span {(end - start) / 1000:9.3f} ms")

    print(f"\n{'lane':<28} {'tasks':>6} {'busy ms':>10} {'busy %':>7} "
          f"{'gaps':>5} {'gap ms':>9} {'longest gap':>21}  copies")
    by_lane = collections.defaultdict(list)
    for e in slices:
        by_lane[e["tid"]].append(e)
    copies = collections.defaultdict(collections.Counter)
    copy_bytes = collections.defaultdict(collections.Counter)
    for e in instants:
        copies[e["tid"]][e["name"]] += 1
        copy_bytes[e["tid"]][e["name"]] += e.get("args", {}).get("bytes", 0)
    gap_lists = {}
    for tid in sorted(by_lane):  # workers first, then devices, as the runtime numbers them
        lane = union((e["ts"], e["ts"] + e.get("dur", 0)) for e in by_lane[tid])
        busy = sum(end - start for start, end in lane)
        gaps = [(lane[i][1], lane[i + 1][0] - lane[i][1]) for i in range(len(lane) - 1)
                if lane[i + 1][0] - lane[i][1] >= args.gap_us]
        gap_lists[tid] = gaps
        longest = max(gaps, key=lambda g: g[1]) if gaps else None
        longest_text = f"{longest[1] / 1000:.3f} at {ms(longest[0]):.3f}" if longest else ""
        copy_text = ", ".join(f"{n} {name} ({copy_bytes[tid][name] / 2**20:.1f} MiB)"
                              for name, n in sorted(copies[tid].items()))
        print(f"{names.get(tid, f'lane {tid}'):<28} {len(by_lane[tid]):>6} {busy / 1000:>10.3f} "
              f"{100.0 * busy / span:>6.1f}% {len(gaps):>5} {sum(g for _, g in gaps) / 1000:>9.3f} "
              f"{longest_text:>21}  {copy_text}")
    if args.gaps:
        for tid, gaps in gap_lists.items():
            if gaps:
                print(f"\ngaps of {names.get(tid, f'lane {tid}')} (start ms: length ms):")
                print("  " + "  ".join(f"{ms(at):.3f}: {length / 1000:.3f}" for at, length in gaps))

    print(f"\n{'task label':<28} {'tasks':>6} {'total ms':>10} {'mean us':>10}")
    labels = collections.defaultdict(list)
    for e in slices:
        labels[e["name"]].append(e.get("dur", 0))
    for label, durations in sorted(labels.items(), key=lambda kv: -sum(kv[1])):
        print(f"{label:<28} {len(durations):>6} {sum(durations) / 1000:>10.3f} "
              f"{sum(durations) / len(durations):>10.1f}")


if __name__ == "__main__":
    main()
