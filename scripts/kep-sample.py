#!/usr/bin/env python3
"""Draw a fixed-seed random sample of surviving concerns over the KEP corpus,
for judging the offline engine's precision by eye (issue 9).

Runs the given gauntlet binary on every KEP (offline, --no-store, JSON), one
process per spec, in a fresh empty working folder with HOME pointed at it, so
nothing is read from or written into a store. Collects the concerns that
require revision (status `accepted` or `reinstated`), shuffles them with
random.Random(SEED) and keeps the first N. Writes:

- a JSON file with the run totals, the sample and, for every sampled spec, all
  of its surviving concerns (to count duplicates);
- a Markdown worksheet: for each sampled concern its spec, id, adversary,
  severity, title, detail, rule, cited lines and the cited text with context,
  then an appendix listing the survivors of each sampled spec.

The population is ordered deterministically (spec name, then the order of the
verdict) before sampling, so the same binary gives the same sample; another
binary gives a different population and so a different sample, drawn the same
way.

Usage:
  scripts/kep-sample.py BINARY [--keps DIR] [--n 60] [--seed 2026]
      [--context 3] [--out-json F] [--out-md F] [--label before] [-j 1]

Standard library only.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SURVIVING = ("accepted", "reinstated")


def run_spec(binary, spec, timeout):
    """Runs one spec; returns (exit code, verdict or None, stderr tail, seconds)."""
    with tempfile.TemporaryDirectory(prefix="kep-sample-") as cwd:
        env = dict(os.environ)
        env["HOME"] = cwd
        env["GAUNTLET_OFFLINE"] = "1"
        env["NO_COLOR"] = "1"
        t0 = time.monotonic()
        try:
            proc = subprocess.run(
                [binary, "--format", "json", "--no-store", "-q", str(spec)],
                capture_output=True,
                cwd=cwd,
                env=env,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return None, None, "timeout", time.monotonic() - t0
        wall = time.monotonic() - t0
    tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
    try:
        verdict = json.loads(proc.stdout.decode("utf-8", "replace"))
    except json.JSONDecodeError:
        verdict = None
    return proc.returncode, verdict, " ".join(tail)[:200], wall


def cited_lines(concern):
    lines = concern.get("lines")
    if isinstance(lines, list) and len(lines) == 2 and all(isinstance(x, int) for x in lines):
        return lines[0], lines[1]
    return None


def excerpt(text_lines, span, context):
    """The cited lines with `context` lines either side, numbered, cited ones marked."""
    if span is None:
        return []
    start, end = span
    lo = max(1, start - context)
    hi = min(len(text_lines), end + context)
    out = []
    for n in range(lo, hi + 1):
        mark = ">" if start <= n <= end else " "
        out.append(f"{mark}{n:5d} | {text_lines[n - 1]}")
    return out


def fence_for(lines):
    """A backtick fence longer than any backtick run in the excerpt."""
    longest = 0
    for line in lines:
        run = 0
        for ch in line:
            run = run + 1 if ch == "`" else 0
            longest = max(longest, run)
    return "`" * max(3, longest + 1)


def md_cell(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary", help="path of the gauntlet binary to measure")
    ap.add_argument("--keps", default="/work/shared/corpus/keps")
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--context", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--label", default="sample", help="name used in the default output paths")
    ap.add_argument("--out-json")
    ap.add_argument("--out-md")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    args = ap.parse_args()

    binary = str(Path(args.binary).resolve())
    if not os.access(binary, os.X_OK):
        print(f"kep-sample: {args.binary}: not an executable file", file=sys.stderr)
        return 2
    out_json = Path(args.out_json or f"kep-sample-{args.label}.json")
    out_md = Path(args.out_md or f"kep-sample-{args.label}.md")

    specs = sorted(p for p in Path(args.keps).glob("*.md") if p.name.upper() != "README.MD")
    if not specs:
        print(f"kep-sample: no specs in {args.keps}", file=sys.stderr)
        return 2

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda s: run_spec(binary, s, args.timeout), specs))

    codes = collections.Counter()
    statuses = collections.Counter()
    severities = collections.Counter()
    adversaries = collections.Counter()
    failures = []
    population = []
    survivors_by_spec = {}
    wall_total = 0.0
    for spec, (code, verdict, tail, wall) in zip(specs, results):
        wall_total += wall
        codes[str(code)] += 1
        if verdict is None or not isinstance(verdict.get("concerns"), list):
            failures.append(f"{spec.name}: exit {code}: {tail}")
            continue
        surv = []
        for c in verdict["concerns"]:
            if not isinstance(c, dict):
                continue
            statuses[c.get("status")] += 1
            if c.get("status") in SURVIVING:
                severities[c.get("severity")] += 1
                adversaries[c.get("adversary")] += 1
                surv.append(c)
                population.append((spec, c))
        survivors_by_spec[spec.name] = surv

    rng = random.Random(args.seed)
    picked = rng.sample(population, min(args.n, len(population)))
    picked.sort(key=lambda sc: (sc[0].name, (cited_lines(sc[1]) or (0, 0))[0], sc[1].get("id", "")))

    sample = []
    text_cache = {}
    for spec, c in picked:
        if spec not in text_cache:
            text_cache[spec] = spec.read_text(encoding="utf-8", errors="replace").splitlines()
        span = cited_lines(c)
        sample.append(dict(
            spec=spec.name,
            id=c.get("id"),
            adversary=c.get("adversary"),
            severity=c.get("severity"),
            status=c.get("status"),
            title=c.get("title"),
            detail=c.get("detail"),
            rule=c.get("rule"),
            section=c.get("section"),
            subject=c.get("subject", []),
            confidence=c.get("confidence"),
            lines=list(span) if span else None,
            excerpt=excerpt(text_cache[spec], span, args.context),
        ))

    sampled_specs = sorted({s["spec"] for s in sample})
    totals = dict(
        binary=binary,
        seed=args.seed,
        n=len(sample),
        specs=len(specs),
        failed=len(failures),
        exit_codes=dict(sorted(codes.items())),
        statuses=dict(statuses.most_common()),
        survivors=len(population),
        survivors_per_spec=round(len(population) / max(1, len(specs) - len(failures)), 2),
        survivor_severities=dict(severities.most_common()),
        survivor_adversaries=dict(adversaries.most_common()),
        wall_s=round(wall_total, 1),
    )
    out_json.write_text(json.dumps(dict(
        totals=totals,
        failures=failures,
        sample=sample,
        survivors_of_sampled_specs={
            name: [dict(id=c.get("id"), adversary=c.get("adversary"), severity=c.get("severity"),
                        title=c.get("title"), lines=cited_lines(c), rule=c.get("rule"))
                   for c in survivors_by_spec[name]]
            for name in sampled_specs
        },
    ), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    md = [f"# KEP precision worksheet ({args.label})", ""]
    md.append(f"- binary: `{binary}` (GAUNTLET_OFFLINE=1, --no-store, --format json, one process per spec)")
    md.append(f"- specs: {totals['specs']} (failed {totals['failed']}), exit codes {totals['exit_codes']}")
    md.append(f"- concern statuses: {totals['statuses']}")
    md.append(f"- surviving concerns: {totals['survivors']} ({totals['survivors_per_spec']} per spec); "
              f"severities {totals['survivor_severities']}; adversaries {totals['survivor_adversaries']}")
    md.append(f"- sample: {len(sample)} drawn with random.Random({args.seed}).sample over the survivors "
              f"ordered by spec name then verdict order; listed by spec and line")
    md.append("")
    for f in failures:
        md.append(f"- FAILED {md_cell(f)}")
    if failures:
        md.append("")
    for i, s in enumerate(sample, 1):
        md.append(f"## {i}. {s['spec']} `{s['id']}`")
        md.append("")
        md.append(f"- adversary: {s['adversary']}; severity: {s['severity']}; status: {s['status']}"
                  + (f"; confidence: {s['confidence']}" if s["confidence"] is not None else ""))
        md.append(f"- rule: {s['rule']}; section: {md_cell(s['section'])}; subject: {md_cell(', '.join(map(str, s['subject'])))}")
        md.append(f"- title: {md_cell(s['title'])}")
        md.append(f"- detail: {md_cell(s['detail'])}")
        md.append(f"- lines: {s['lines']}")
        md.append("- verdict: ____ (a real gap / b true but trivial or duplicate / c false alarm)")
        md.append("")
        if s["excerpt"]:
            fence = fence_for(s["excerpt"])
            md.append(fence + "text")
            md.extend(s["excerpt"])
            md.append(fence)
            md.append("")
    md.append("## Appendix: all surviving concerns of the sampled specs (for duplicates)")
    md.append("")
    for name in sampled_specs:
        md.append(f"### {name}")
        md.append("")
        for c in survivors_by_spec[name]:
            md.append(f"- `{c.get('id')}` {c.get('adversary')} {c.get('severity')} lines {cited_lines(c)}: {md_cell(c.get('title'))}")
        md.append("")
    out_md.write_text("\n".join(md), encoding="utf-8")

    print(f"specs {totals['specs']} (failed {totals['failed']})  survivors {totals['survivors']} "
          f"({totals['survivors_per_spec']}/spec)  sampled {len(sample)} from {len(sampled_specs)} specs  "
          f"wall {totals['wall_s']} s  -> {out_json}, {out_md}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
