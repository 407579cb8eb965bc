#!/usr/bin/env python3
"""Checks that the list of diagnostics in pragma-plugin/README.md (section "The table of
diagnostics") is the table of pragma-plugin/src/Diagnostics.def: the same IDs in the same
order, each with the same severity and the same text, so that the documentation cannot drift
from the messages.

usage: check_diagnostics_doc.py <Diagnostics.def> <README.md>"""
import re
import sys

HEADING = "### The table of diagnostics"


def fail(message):
    print("FAILED: " + message)
    sys.exit(1)


def unescape(literal):
    return re.sub(r'\\(.)', r'\1', literal)


def table(path):
    """(ID, severity, text) of each NANORT_DIAG entry, string literals joined."""
    text = open(path, encoding="utf-8").read()
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    entry = re.compile(r'NANORT_DIAG\(\s*(\w+)\s*,\s*(\w+)\s*,((?:\s*"(?:[^"\\]|\\.)*")+)\s*\)')
    literal = re.compile(r'"((?:[^"\\]|\\.)*)"')
    rows = []
    for m in entry.finditer(text):
        rows.append((m.group(1), m.group(2).lower(),
                     "".join(unescape(s) for s in literal.findall(m.group(3)))))
    if text.count("NANORT_DIAG(") - text.count("#define NANORT_DIAG(") != len(rows):
        fail("%s: an entry that is not NANORT_DIAG(Id, Severity, \"text\")" % path)
    return rows


def documented(path):
    """(ID, severity, text) of each '- `ID`, severity: `text`' line of the section."""
    lines = open(path, encoding="utf-8").read().splitlines()
    if HEADING not in lines:
        fail("%s has no section '%s'" % (path, HEADING))
    item = re.compile(r'^- `(\w+)`, (error|warning|note): `(.*)`$')
    rows = []
    for line in lines[lines.index(HEADING) + 1:]:
        if line.startswith("#"):
            break
        if line.startswith("- "):
            m = item.match(line)
            if not m:
                fail("%s: not '- `ID`, severity: `text`': %s" % (path, line))
            rows.append(m.groups())
    return rows


def main():
    if len(sys.argv) != 3:
        fail("usage: check_diagnostics_doc.py <Diagnostics.def> <README.md>")
    defined, listed = table(sys.argv[1]), documented(sys.argv[2])
    if not defined:
        fail("%s declares no diagnostics" % sys.argv[1])
    problems = []
    listed_ids = [row[0] for row in listed]
    defined_ids = [row[0] for row in defined]
    for row in defined:
        if row[0] not in listed_ids:
            problems.append("not in the README: - `%s`, %s: `%s`" % row)
    for row in listed:
        if row[0] not in defined_ids:
            problems.append("in the README but not in the table: %s" % row[0])
    for d, l in zip(defined, listed):
        if d[0] == l[0] and d != l:
            problems.append("%s differs: the table has %s `%s`, the README %s `%s`" %
                            (d[0], d[1], d[2], l[1], l[2]))
    if not problems and defined_ids != listed_ids:
        problems.append("the README lists the diagnostics in another order than the table")
    if problems:
        fail("\n".join(problems))
    print("diagnostics documented: %d, as in the table" % len(defined))


if __name__ == "__main__":
    main()
