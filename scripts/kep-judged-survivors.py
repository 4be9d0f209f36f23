#!/usr/bin/env python3
"""Which concerns of an earlier judged KEP sample still survive (issue 9).

Reads the judged table of one "## Session N" section of
docs/kep-precision.md (by default Session 14's), runs the given
gauntlet binary on each KEP named there as scripts/kep-sample.py does
(offline, --no-store, JSON, a fresh working folder), and
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
import importlib.util
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# One run per KEP exactly as kep-sample.py does it (offline, no store, a
# fresh working folder and HOME), so the two scripts judge the same verdicts.
_spec = importlib.util.spec_from_file_location("kep_sample", ROOT / "scripts" / "kep-sample.py")
kep_sample = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kep_sample)
ROW = re.compile(r"\| (\d+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \| ([abc]) \|")


def judged(section):
    doc = (ROOT / "docs" / "kep-precision.md").read_text()
    start = doc.find(f"## {section}")
    if start < 0:
        sys.exit(f"kep-judged-survivors: no section '## {section}' in docs/kep-precision.md")
    part = doc[start:]
    end = part.find("\n## ", 1)
    part = part if end < 0 else part[:end]
    rows = []
    for line in part.split("\n"):
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
    if not rows:
        sys.exit(f"kep-judged-survivors: section '{section}' has no judged table")
    return rows


def survivors(binary, path):
    _, verdict, err, _ = kep_sample.run_spec(binary, path, 120)
    if verdict is None:
        sys.exit(f"kep-judged-survivors: no verdict for {path.name}: {err}")
    return [c for c in verdict["concerns"] if c["status"] in kep_sample.SURVIVING]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--keps", default=str(ROOT.parent / "shared" / "corpus" / "keps"))
    ap.add_argument("--section", default="Session 14")
    args = ap.parse_args()
    # Runs happen in a temporary folder: a path to the binary must not be relative.
    binary = str(Path(args.binary).resolve()) if os.sep in args.binary else args.binary
    rows = judged(args.section)
    cache = {}
    still, total = collections.Counter(), collections.Counter()
    for spec, rule, span, verdict in rows:
        if spec not in cache:
            cache[spec] = survivors(binary, Path(args.keps).resolve() / f"{spec}.md")
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
