#!/usr/bin/env python3
"""Count concerns that end `dismissed` with cited lines, over a labelled
corpus folder (issue 9's "the gauntlet happens offline" measure).

Usage:
  scripts/dismissed-with-citations.py --gauntlet 'target/debug/gauntlet --format json --no-store' DIR

For each spec (fed on stdin, in a fresh working folder, like score.py) it
counts:
  - dismissed: concerns whose status is `dismissed`;
  - cited: those whose dismissing votes cite at least one line;
  - mitigated_dismissed: `mitigated` labels matched (score.py's rule:
    adversary, keyword, line within 6) by a dismissed concern with a
    citation, and by no surviving concern;
  - mitigated_raised: `mitigated` labels matched by any raised concern.
With --list it prints each dismissed concern and its cited lines.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

SLACK = 6


def matches(c, lab):
    if c.get("adversary") != lab["persona"]:
        return False
    text = (c.get("title", "") + " " + c.get("detail", "")).lower()
    if not any(k in text for k in lab["any_of"]):
        return False
    lines = c.get("lines")
    if isinstance(lines, list) and len(lines) == 2:
        return lines[0] - SLACK <= lab["line"] <= lines[1] + SLACK
    return True


def cites(c):
    out = set()
    for v in c.get("votes", []):
        if v.get("decision") == "dismiss":
            out.update(v.get("cites", []))
    return sorted(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gauntlet", required=True)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("dir")
    args = ap.parse_args()
    words = shlex.split(args.gauntlet)
    if "/" in words[0] and Path(words[0]).exists():
        words[0] = str(Path(words[0]).resolve())
    t = dict(specs=0, raised=0, dismissed=0, cited=0, mitigated=0,
             mitigated_raised=0, mitigated_dismissed=0)
    for spec in sorted(Path(args.dir).glob("*.md")):
        lab_path = spec.with_suffix(".labels.json")
        if not lab_path.exists():
            continue
        labels = json.loads(lab_path.read_text())
        with tempfile.TemporaryDirectory() as cwd:
            env = dict(os.environ, HOME=cwd)
            p = subprocess.run(words, input=spec.read_bytes(), capture_output=True, cwd=cwd, env=env)
        v = json.loads(p.stdout)
        cs = v["concerns"]
        t["specs"] += 1
        t["raised"] += len(cs)
        dismissed = [c for c in cs if c["status"] == "dismissed"]
        cited = [c for c in dismissed if cites(c)]
        t["dismissed"] += len(dismissed)
        t["cited"] += len(cited)
        surviving = [c for c in cs if c["status"] in ("accepted", "reinstated")]
        for lab in labels.get("mitigated", []):
            t["mitigated"] += 1
            if any(matches(c, lab) for c in cs):
                t["mitigated_raised"] += 1
            if any(matches(c, lab) for c in cited) and not any(matches(c, lab) for c in surviving):
                t["mitigated_dismissed"] += 1
        if args.list:
            for c in cited:
                print(f"{spec.name}: {c['id']} {c['lines']} {c['title']} -> lines {cites(c)}")
    print(json.dumps(t))
    return 0


if __name__ == "__main__":
    sys.exit(main())
