#!/usr/bin/env python3
"""Per-persona recall and false-alarm figures for the offline engine.

Reuses the matching of the corpus scorer (`score.py`, imported from beside the
corpus) and splits its totals by adversary persona. With --why, prints for
each missed defect and false alarm the concerns of that persona near the
label's line, with their status and the final reasoning, to see why.

Usage:
  scripts/score-by-persona.py --gauntlet 'target/release/gauntlet --format json --no-store' \
      [--score-py /work/shared/corpus/score.py] [--why] DIR [DIR ...]
"""
import argparse
import importlib.util
import json
from collections import defaultdict
from pathlib import Path


def load_score(path):
    spec = importlib.util.spec_from_file_location("score", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gauntlet", required=True)
    ap.add_argument("--score-py", default="/work/shared/corpus/score.py")
    ap.add_argument("--why", action="store_true")
    ap.add_argument("--noise", action="store_true", help="list unlabeled survivors")
    ap.add_argument("--causes", action="store_true",
                    help="count missed defects by cause (never on the validation set)")
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    score = load_score(args.score_py)
    words = score.resolve_command(args.gauntlet)
    per = defaultdict(lambda: dict(defects=0, caught=0, mitigated=0, alarms=0, unlabeled=0))
    causes = defaultdict(int)
    specs = 0
    for d in args.dirs:
        for spec in sorted(Path(d).glob("*.md")):
            lab_path = spec.with_suffix(".labels.json")
            if not lab_path.exists():
                continue
            labels = json.loads(lab_path.read_text())
            verdict, proc, _ = score.run_one(words, spec, 120)
            if verdict is None:
                print(f"{spec.name}: no JSON (exit {proc.returncode})")
                continue
            specs += 1
            concerns = [c for c in verdict["concerns"] if isinstance(c, dict)]
            surv = [c for c in concerns if c.get("status") in score.SURVIVING]
            matched = set()
            for kind, key in (("defects", "caught"), ("mitigated", "alarms")):
                for lab in labels.get(kind, []):
                    p = per[lab["persona"]]
                    p[kind] += 1
                    hits = [c for c in surv if score.concern_matches(c, lab)]
                    matched.update(id(c) for c in hits)
                    bad = (kind == "defects") != bool(hits)
                    if hits:
                        p[key] += 1
                    if bad and kind == "defects" and args.causes:
                        causes[miss_cause(score, concerns, lab)] += 1
                    if bad and args.why:
                        tag = "MISS" if kind == "defects" else "ALARM"
                        print(f"{tag} {spec.name}:{lab['line']} {lab['id']} [{lab['persona']}] {lab['about']}")
                        for c in concerns:
                            ln = c.get("lines") or [0, 0]
                            if c.get("adversary") == lab["persona"] and ln[0] - 15 <= lab["line"] <= ln[1] + 15:
                                kw = any(k in (c["title"] + " " + c["detail"]).lower() for k in lab["any_of"])
                                print(f"    {c['id']} {c['status']:10s} {ln} rule={c.get('rule')} kw={kw} :: {c['title']}")
            for c in surv:
                if id(c) not in matched:
                    per[c.get("adversary", "?")]["unlabeled"] += 1
                    if args.noise:
                        print(f"NOISE {spec.name} {c['id']} {c.get('lines')} rule={c.get('rule')} :: {c['title']}")
    print(f"{'persona':22s} {'recall':>14s} {'false alarms':>14s} {'unlabeled/spec':>15s}")
    for name in sorted(per):
        p = per[name]
        r = p["caught"] / p["defects"] if p["defects"] else 0
        f = p["alarms"] / p["mitigated"] if p["mitigated"] else 0
        print(f"{name:22s} {r:5.2f} ({p['caught']:2d}/{p['defects']:2d}) {f:5.2f} ({p['alarms']:2d}/{p['mitigated']:2d}) {p['unlabeled']/max(specs,1):15.2f}")
    if args.causes:
        print("\nmissed defects by cause:")
        for name, n in sorted(causes.items(), key=lambda kv: -kv[1]):
            print(f"  {n:3d}  {name}")


def miss_cause(score, concerns, lab):
    """Why a defect was missed: the closest thing the run did raise."""
    def near(c):
        ln = c.get("lines")
        return not ln or ln[0] - score.SLACK <= lab["line"] <= ln[1] + score.SLACK

    def words(c):
        text = (str(c.get("title", "")) + " " + str(c.get("detail", ""))).lower()
        return any(k in text for k in lab["any_of"])

    mine = [c for c in concerns if c.get("adversary") == lab["persona"]]
    if any(score.concern_matches(c, lab) for c in mine):
        return "raised and matching, but not surviving (dismissed, filtered or deferred)"
    if any(words(c) for c in mine if c.get("status") in score.SURVIVING):
        return "right persona and words, too far from the line"
    if any(near(c) for c in mine if c.get("status") in score.SURVIVING):
        return "right persona near the line, other words"
    if any(near(c) and words(c) for c in concerns if c.get("status") in score.SURVIVING):
        return "another persona raised it near the line"
    return "nothing of that persona near the line"


if __name__ == "__main__":
    main()
