#!/usr/bin/env python3
"""Summarise one run of the model benchmark from the mock's logs
(benches/mock_llm.py --log REQS --log-prompts PROMPTS):

- calls and prompt / completion tokens per phase (chars / 4, as the mock reports);
- cached-prefix share: of all prompt characters, the share that lies in a
  prefix (system text, then user text) identical to an earlier call of the
  same run, which is what a provider's prompt cache can serve;
- sequential round trips: the longest chain of calls where each one arrives
  after the previous one was answered.

  bench_report.py REQS.jsonl PROMPTS.jsonl
"""
import json
import sys
from collections import OrderedDict


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def common_prefix(a, b):
    n = min(len(a), len(b))
    i = 0
    # Compare in blocks first: prompts are long and mostly equal.
    step = 256
    while i + step <= n and a[i:i + step] == b[i:i + step]:
        i += step
    while i < n and a[i] == b[i]:
        i += 1
    return i


def main():
    reqs = sorted(load(sys.argv[1]), key=lambda r: r["t_recv"])
    prompts = sorted(load(sys.argv[2]), key=lambda r: r["t_recv"]) if len(sys.argv) > 2 else []
    phases = OrderedDict()
    for r in reqs:
        p = phases.setdefault(r["phase"], [0, 0, 0])
        p[0] += 1
        p[1] += r["prompt_tokens"]
        p[2] += r["completion_tokens"]
    print(f"{'phase':<24}{'calls':>6}{'prompt tok':>12}{'compl tok':>11}")
    for k, (c, i, o) in phases.items():
        print(f"{k:<24}{c:>6}{i:>12}{o:>11}")
    total = sum(p[1] for p in phases.values())
    print(f"{'total':<24}{sum(p[0] for p in phases.values()):>6}{total:>12}"
          f"{sum(p[2] for p in phases.values()):>11}")
    if prompts:
        keys = [p["system"] + "\x00" + p["prompt"] for p in prompts]
        shared = 0
        cacheable = 0
        for i, k in enumerate(keys):
            p = max((common_prefix(k, keys[j]) for j in range(i)), default=0)
            shared += p
            # OpenAI caches identical prefixes of 1,024 tokens or more.
            if p >= 4 * 1024:
                cacheable += p
        all_chars = sum(len(k) for k in keys)
        print(f"cached-prefix share: {shared / max(all_chars, 1):.1%} "
              f"({shared // 4} of {all_chars // 4} prompt tokens); "
              f"in prefixes of >= 1,024 tokens: {cacheable / max(all_chars, 1):.1%}")
    chain = []
    for i, r in enumerate(reqs):
        before = [chain[j] for j in range(i) if reqs[j]["t_sent"] <= r["t_recv"]]
        chain.append(max(before, default=0) + 1)
    print(f"sequential round trips: {max(chain, default=0)}")


if __name__ == "__main__":
    main()
