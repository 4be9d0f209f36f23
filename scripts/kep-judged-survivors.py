#!/usr/bin/env python3
"""Which concerns of an earlier judged KEP sample still survive (issue 9).

Reads the table "The 60 judged concerns" under a heading of
docs/kep-precision.md (by default the Session 14 one), runs the given
gauntlet binary (offline, --no-store, JSON) on each KEP named there, and
counts, per verdict (a real gap, b true but trivial, c false alarm), the
judged concerns that still survive. A judged concern survives when a
concern of the same rule in the same KEP still requires revision (status
`accepted` or `reinstated`) with lines within 6 of its own (the final
boss's concerns, which cite no line, by rule alone).

An estimate only: concerns the binary raises that the sample never judged
are not counted. Judge a fresh sample (scripts/kep-sample.py) for a figure.

Usage:
  scripts/kep-judged-survivors.py BINARY [--keps DIR] [--section "Session 14"]

Standard library only.
"""
import argparse
import collections
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROW = re.compile(r"\| (\d+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \| ([abc]) \|")


def judged(section):
    doc = (ROOT / "docs" / "kep-precision.md").read_text()
    start = doc.find(f"## {section}")
    if start < 0:
        sys.exit(f"kep-judged-survivors: no section '## {section}' in docs/kep-precision.md")
    part = doc[start:]
    table = part.find("### The 60 judged concerns")
    if table < 0:
        sys.exit(f"kep-judged-survivors: section '{section}' has no judged table")
    rows = []
    for line in part[table:].split("\n"):
        m = ROW.match(line)
        if not m:
            continue
        _, spec, rule, _, _, _, lines, verdict = (x.strip() for x in m.groups())
        if re.match(r"\d", lines):
            a, _, b = lines.partition("-")
            span = (int(a), int(b or a))
        else:
            span = None
        rows.append((spec, rule, span, verdict))
    return rows


def survivors(binary, path):
    out = subprocess.run([binary, "--format", "json", "--no-store", "-q", str(path)],
                         capture_output=True, check=False).stdout
    return [c for c in json.loads(out)["concerns"] if c["status"] in ("accepted", "reinstated")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--keps", default=str(ROOT.parent / "shared" / "corpus" / "keps"))
    ap.add_argument("--section", default="Session 14")
    args = ap.parse_args()
    rows = judged(args.section)
    cache = {}
    still, total = collections.Counter(), collections.Counter()
    for spec, rule, span, verdict in rows:
        if spec not in cache:
            cache[spec] = survivors(args.binary, Path(args.keps) / f"{spec}.md")
        total[verdict] += 1
        for c in cache[spec]:
            lines = c.get("lines")
            near = span is None or (lines and lines[0] <= span[1] + 6 and lines[1] >= span[0] - 6)
            if c.get("rule") == rule and near:
                still[verdict] += 1
                break
    for v in "abc":
        print(f"{v}: {still[v]} of {total[v]} still survive")
    n = sum(still.values())
    print(f"precision of what is left: {still['a']}/{n} = {still['a'] / n if n else 0:.3f}")


if __name__ == "__main__":
    main()
