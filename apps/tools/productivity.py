#!/usr/bin/env python3
"""Table I: the host code of each version of each application, counted.

For every apps/<app>/<version> file: host lines of code (neither blank nor comment), calls of
the CUDA runtime API (cudaXxx(...) and <<<...>>> launches), calls of the OpenCL API
(clXxx(...)), pragmas (#pragma omp/oss lines) and calls of the nanort C API. Kernels
(<app>.cu, <app>.cl) and the shared headers (<app>.h, common/app.h) are not host code of any
version and are left out.

  productivity.py                  prints the table (Markdown)
  productivity.py --write FILE     also puts it into FILE between the table1 markers
  productivity.py --check          exits 1 unless every application meets the targets: at
                                   most 5 pragmas per annotated version, and fewer host lines
                                   than both native versions
"""
import argparse
import pathlib
import re
import sys

APPS = ["saxpy", "matmul", "nbody", "julia", "krist", "nbody-mpi"]
VERSIONS = [("native_cuda", ".cu"), ("native_opencl", ".c"), ("annotated_cuda", ".c"),
            ("annotated_opencl", ".c"), ("annotated_mixed", ".c")]
BEGIN, END = "<!-- table1:begin -->", "<!-- table1:end -->"


def strip_comments(text):
    """The text without C/C++ comments (string literals kept; line breaks kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def count(path):
    code = strip_comments(path.read_text())
    lines = [l for l in code.splitlines() if l.strip()]
    return {
        "lines": len(lines),
        "cuda": len(re.findall(r"\bcuda[A-Z]\w*\s*\(", code)) + code.count("<<<"),
        "opencl": len(re.findall(r"\bcl[A-Z]\w*\s*\(", code)),
        "pragmas": sum(1 for l in lines if re.match(r"\s*#\s*pragma\s+(omp|oss)\b", l)),
        "nanort": len(re.findall(r"\bnanort_\w+\s*\(", code)),
    }


def collect(root):
    rows = []
    for app in APPS:
        for version, ext in VERSIONS:
            path = root / app / (version + ext)
            if path.exists():
                rows.append((app, version, count(path)))
    return rows


def table(rows):
    text = ["| application | version | host lines | CUDA API calls | OpenCL API calls | pragmas | nanort calls |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for app, version, c in rows:
        text.append(f"| {app} | {version} | {c['lines']} | {c['cuda']} | {c['opencl']} | "
                    f"{c['pragmas']} | {c['nanort']} |")
    return "\n".join(text) + "\n"


def check(rows):
    problems = []
    by_app = {}
    for app, version, c in rows:
        by_app.setdefault(app, {})[version] = c
    for app in APPS:
        versions = by_app.get(app, {})
        natives = [versions[v]["lines"] for v in ("native_cuda", "native_opencl") if v in versions]
        if len(natives) < 2:
            problems.append(f"{app}: a native version is missing")
            continue
        for version, c in versions.items():
            if not version.startswith("annotated"):
                continue
            if c["pragmas"] > 5:
                problems.append(f"{app} {version}: {c['pragmas']} pragmas (at most 5)")
            if c["lines"] >= min(natives):
                problems.append(f"{app} {version}: {c['lines']} host lines, not fewer than the "
                                f"native versions' {natives}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", metavar="FILE")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    rows = collect(root)
    text = table(rows)
    print(text, end="")
    if args.write:
        path = pathlib.Path(args.write)
        doc = path.read_text()
        if BEGIN not in doc or END not in doc:
            sys.exit(f"productivity.py: {path} has no {BEGIN} ... {END} block")
        head, rest = doc.split(BEGIN, 1)
        path.write_text(head + BEGIN + "\n" + text + END + rest.split(END, 1)[1])
    if args.check:
        problems = check(rows)
        for p in problems:
            print("TARGET MISSED: " + p)
        if problems:
            sys.exit(1)
        print("targets met: at most 5 pragmas, fewer host lines than both native versions")


if __name__ == "__main__":
    main()
