#!/usr/bin/env python3
"""Row 110: summarizes the span records (apply_span.py): per arm, for the graph's last two
launches (block >= 1000: the last), the first warp's entry, the last warp's end and the spread of
the warps' ends, in us; and the gap from the second-last launch's last end to the last launch's
first entry.
usage: span_summary.py span-*.tsv[.gz]
"""
import gzip
import statistics
import sys

for path in sys.argv[1:]:
    arms = {}
    for line in (gzip.open(path, "rt") if path.endswith(".gz") else open(path)):
        build, arm, block, smid, warp, t0, _, _, _, _, span = line.rstrip("\n").split("\t")
        parity = int(block) // 1000
        arms.setdefault(arm, {}).setdefault(parity, []).append((int(t0), int(t0) + int(span)))
    for arm, launches in arms.items():
        first = min(t for p in launches.values() for t, _ in p)
        out = []
        for parity in (0, 1):
            w = launches[parity]
            entry = min(t for t, _ in w)
            ends = sorted(e for _, e in w)
            out.append((entry, ends))
        (e0, ends0), (e1, ends1) = out
        us = lambda ns: (ns - first) / 1000
        print(f"{path} {arm}: launch 8 entry {us(e0):.2f} ends median {us(statistics.median(ends0)):.2f} "
              f"p90 {us(ends0[int(0.9 * len(ends0))]):.2f} last {us(ends0[-1]):.2f} | gap {(e1 - ends0[-1]) / 1000:.2f} | "
              f"launch 9 entry {us(e1):.2f} ends median {us(statistics.median(ends1)):.2f} last {us(ends1[-1]):.2f} "
              f"(span {(ends1[-1] - e1) / 1000:.2f}, period {(e1 - e0) / 1000:.2f})")
