#!/usr/bin/env python3
"""Build and run an OmpSs compiler test suite's run-tests with nanocc/nanocxx.

The suite is BSC Mercurium's (github bsc-pm/mcxx), tests/07_phases_ompss.dg and
tests/07_phases_ompss_2.dg: C and C++ programs, each with a <testinfo> block of shell
assignments that say how Mercurium builds and runs it. The suite is not part of this
repository; give the path of a checkout with --mcxx.

    bench/ompss-suite/run_suite.py --mcxx ~/src/mcxx --prefix /opt/nanort --out /tmp/suite

Prints one line per test and a summary (all run-tests, and the subset that uses only the
constructs nanort lowers); writes OUT/results.tsv and OUT/logs/. See README.md here.
"""
import argparse
import concurrent.futures
import os
import re
import shlex
import subprocess
import sys
import time

SUITES = {"tests/07_phases_ompss.dg": "ompss", "tests/07_phases_ompss_2.dg": "ompss_2"}
# Directives of the subset: what nanort lowers (docs/ompss-compatibility.md).
SUBSET_DIRECTIVES = {"task", "taskwait", "target", "critical", "atomic", "taskloop",
                     "declare reduction"}
# Two-word directives, named by both words.
COMBINED = {("declare", "reduction"), ("declare", "simd"), ("declare", "target"),
            ("parallel", "for"), ("parallel", "sections"), ("parallel", "master"),
            ("task", "for"), ("taskloop", "for"), ("taskloop", "simd"), ("target", "data"),
            ("target", "update"), ("for", "simd")}
# Nanos++ routines nanort declares; a test calling any other nanos_* routine is out of the subset.
NANOS_DECLARED = {"nanos_get_opencl_num_devices", "nanos_get_cuda_num_devices",
                  "nanos_malloc_pinned_cuda", "nanos_free_pinned_cuda", "nanos_malloc_opencl",
                  "nanos_free_opencl"}
TESTINFO_VARS = ["test_ignore", "test_compile_fail", "test_nolink", "test_noexec",
                 "test_CFLAGS", "test_CXXFLAGS", "test_ENV"]


def read_testinfo(text):
    """Evaluates the <testinfo> block with bash, as the suite's driver does."""
    m = re.search(r"<testinfo>(.*?)</testinfo>", text, re.S)
    block = m.group(1) if m else ""
    script = block + "\n" + "".join(
        'printf "%%s=%%s\\x1f" %s "${%s}";' % (v, v) for v in TESTINFO_VARS)
    script += 'for g in "${test_generator[@]}"; do printf "gen=%s\\x1f" "$g"; done'
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True).stdout
    info, generators = {}, []
    for item in out.split("\x1f"):
        key, _, value = item.partition("=")
        if key == "gen":
            generators.append(value)
        elif key:
            info[key] = value
    return info, generators


def directives(text):
    """The (directive, clauses) of every omp/oss pragma in a file."""
    found = []
    for line in re.sub(r"\\\n", " ", text).splitlines():
        m = re.match(r"\s*#\s*pragma\s+(?:omp|oss)\s+(.*)", line)
        if not m:
            continue
        words = re.findall(r"[A-Za-z_]\w*", m.group(1).split("//")[0])
        if not words:
            continue
        name = words[0]
        if len(words) > 1 and (words[0], words[1]) in COMBINED:
            name += " " + words[1]
        found.append((name, set(re.findall(r"([A-Za-z_]\w*)\s*\(", m.group(1)))))
    return found


def select(mcxx):
    """The run-tests of the suite: how to build each, and whether it is in the subset."""
    tests = []
    for suite, short in SUITES.items():
        root = os.path.join(mcxx, suite)
        if not os.path.isdir(root):
            sys.exit("run_suite.py: %s is not a folder: --mcxx must name a checkout of "
                     "github.com/bsc-pm/mcxx" % root)
        for folder, _, files in sorted(os.walk(root)):
            for name in sorted(files):
                if not name.endswith((".c", ".cpp")):
                    continue
                path = os.path.join(folder, name)
                text = open(path, errors="replace").read()
                info, generators = read_testinfo(text)
                configs = [g.split()[0].replace("config/", "") for g in generators if g.split()]
                if "mercurium-ompss" in configs:
                    mode = "ompss"        # built the Nanos++ (OmpSs-1) way where offered
                elif "mercurium-ompss-2" in configs or "mercurium-nanos6-regions" in configs:
                    mode = "ompss-2"
                else:
                    continue              # device-only or Fortran configurations: compile-only
                if any(info.get(v) for v in ("test_ignore", "test_compile_fail",
                                             "test_nolink", "test_noexec")):
                    continue
                cxx = name.endswith(".cpp")
                flags = shlex.split(info.get("test_CXXFLAGS" if cxx else "test_CFLAGS", ""))
                if any("c++11" in g.split()[1:] for g in generators):
                    flags.append("-std=c++11")
                used = directives(text)
                names = {d for d, _ in used}
                clauses = set().union(*(c for _, c in used)) if used else set()
                nanos = set(re.findall(r"\b(nanos6?_\w+)\s*\(", text)) - NANOS_DECLARED
                in_subset = ((names & SUBSET_DIRECTIVES or "reduction" in clauses)
                             and not names - SUBSET_DIRECTIVES and not nanos
                             and not re.search(r"#\s*include\s*<nanos", text))
                tests.append(dict(name=os.path.relpath(path, mcxx), path=path, cxx=cxx,
                                  mode=mode, flags=flags, env=info.get("test_ENV", ""),
                                  subset=bool(in_subset)))
    return tests


def first_error(text):
    for line in text.splitlines():
        if re.search(r"\berror\b|undefined reference|fatal|what\(\)", line):
            return line.strip()
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip() if lines else ""


def run_one(test, args, workers):
    stem = test["name"].replace("/", "__").rsplit(".", 1)[0]
    exe = os.path.join(args.out, "bin", stem)
    driver = os.path.join(args.prefix, "bin", "nanocxx" if test["cxx"] else "nanocc")
    # The flags of Mercurium's test configurations (tests/config/mercurium-nanox and -ompss-2).
    mode_flags = ["--ompss", "-DNANOX"] if test["mode"] == "ompss" else ["--ompss-2"]
    command = [driver] + mode_flags + test["flags"] + ["-o", exe, test["path"]]
    log = os.path.join(args.out, "logs", stem)
    try:
        build = subprocess.run(command, capture_output=True, text=True, timeout=300,
                               errors="replace")
        build_text, build_rc = build.stdout + build.stderr, build.returncode
    except subprocess.TimeoutExpired:
        build_text, build_rc = "build timed out after 300 s", 124
    with open(log + ".build.log", "w") as f:
        f.write(" ".join(map(shlex.quote, command)) + "\n" + build_text)
    result = dict(test=test["name"], subset="yes" if test["subset"] else "no",
                  build="ok" if build_rc == 0 else "FAIL", runs="", error="")
    if build_rc != 0:
        result["error"] = first_error(build_text)
        return result
    outcomes = []
    for n in workers:
        env = dict(os.environ, NANORT_CPU_WORKERS=str(n))
        for assignment in shlex.split(test["env"]):
            key, _, value = assignment.partition("=")
            env[key] = value
        try:
            run = subprocess.run([exe], capture_output=True, text=True, timeout=args.timeout,
                                 env=env, cwd=os.path.join(args.out, "bin"), errors="replace")
            text, rc = run.stdout + run.stderr, run.returncode
        except subprocess.TimeoutExpired:
            text, rc = "timed out after %d s" % args.timeout, "timeout"
        with open("%s.run-%d.log" % (log, n), "w") as f:
            f.write(text[-20000:])
        outcomes.append("pass" if rc == 0 else "FAIL")
        if rc != 0 and not result["error"]:
            if rc == "timeout":
                status = "timed out after %d s" % args.timeout
            elif rc < 0:
                status = "killed by signal %d" % -rc
            else:
                status = "exit status %d" % rc
            detail = first_error(text) if rc != "timeout" else ""
            result["error"] = "NANORT_CPU_WORKERS=%d: %s%s" % (
                n, status, "; " + detail if detail else "")
    result["runs"] = ",".join(outcomes)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mcxx", required=True, help="a checkout of github.com/bsc-pm/mcxx")
    parser.add_argument("--prefix", required=True,
                        help="where nanort is installed (PREFIX/bin/nanocc)")
    parser.add_argument("--out", required=True, help="folder for results.tsv, logs, programs")
    parser.add_argument("--workers", default="1,2,4",
                        help="NANORT_CPU_WORKERS values to run each test with (default 1,2,4, "
                             "as Mercurium runs each test with 1, 2 and 4 threads)")
    parser.add_argument("--timeout", type=int, default=30, help="seconds per run (default 30)")
    parser.add_argument("-j", type=int, default=2, help="tests built and run at once")
    parser.add_argument("filter", nargs="*", help="only tests whose path contains one of these")
    args = parser.parse_args()
    args.out = os.path.abspath(args.out)
    if not os.access(os.path.join(args.prefix, "bin", "nanocc"), os.X_OK):
        sys.exit("run_suite.py: %s/bin/nanocc not found: --prefix must name a nanort "
                 "installation (cmake --install BUILD --prefix PREFIX)" % args.prefix)
    workers = [int(w) for w in args.workers.split(",")]
    tests = [t for t in select(args.mcxx)
             if not args.filter or any(f in t["name"] for f in args.filter)]
    for sub in ("bin", "logs"):
        os.makedirs(os.path.join(args.out, sub), exist_ok=True)

    results = []
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        for i, r in enumerate(pool.map(lambda t: run_one(t, args, workers), tests)):
            results.append(r)
            print("%3d/%d %-58s build=%-4s runs=%-14s %s" % (
                i + 1, len(tests), r["test"], r["build"], r["runs"] or "-", r["error"][:110]),
                flush=True)
    columns = ["test", "subset", "build", "runs", "error"]
    with open(os.path.join(args.out, "results.tsv"), "w") as f:
        f.write("\t".join(columns) + "\n")
        for r in results:
            f.write("\t".join(r[c].replace("\t", " ") for c in columns) + "\n")

    def summary(rows):
        built = sum(r["build"] == "ok" for r in rows)
        passed = sum(r["build"] == "ok" and "FAIL" not in r["runs"] for r in rows)
        return "%d tests, %d built, %d passed with every worker count (%s)" % (
            len(rows), built, passed, args.workers)
    print("all run-tests: " + summary(results))
    print("subset (task, taskwait, target, critical, atomic, taskloop, reductions): "
          + summary([r for r in results if r["subset"] == "yes"]))


if __name__ == "__main__":
    main()
