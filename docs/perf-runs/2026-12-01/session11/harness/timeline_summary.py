#!/usr/bin/env python3
"""Row 90: summarizes the harness's timeline records (devrun-timeline.sh's timeline-*.tsv).

For each file and arm: the launch starts at the earliest warp entry; per warp, its entry and its
events (prologue begins, prologue issued, inputs staged, first item's end, loop's end) in us
after that; printed as median / p90 / max over the warps, then the blocks' ends (their last
warp's loop end) as min / median / max.
usage: timeline_summary.py timeline-*.tsv
"""
import statistics
import sys

EVENTS = ["entry", "prologue begins", "prologue issued", "staged", "first item end", "loop end"]


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


for path in sys.argv[1:]:
    arms = {}
    for line in open(path):
        build, arm, block, smid, warp, t0, *events = line.split("\t")
        arms.setdefault(arm, []).append((int(block), int(t0), [int(e) for e in events]))
    for arm, warps in arms.items():
        start = min(t0 for _, t0, _ in warps)
        rows = {name: [] for name in EVENTS}
        block_end = {}
        for block, t0, events in warps:
            entry = (t0 - start) % (1 << 32)
            rows["entry"].append(entry)
            for name, e in zip(EVENTS[1:], events):
                rows[name].append(entry + e)
            block_end[block] = max(block_end.get(block, 0), entry + events[-1])
        print(f"{path} {arm} ({len(warps)} warps, {len(block_end)} blocks), us after the first entry:")
        for name in EVENTS:
            v = rows[name]
            print(f"  {name:16s} median {statistics.median(v) / 1e3:6.2f}  p90 {pct(v, 0.9) / 1e3:6.2f}"
                  f"  max {max(v) / 1e3:6.2f}")
        ends = list(block_end.values())
        print(f"  {'block ends':16s} min {min(ends) / 1e3:6.2f}  median "
              f"{statistics.median(ends) / 1e3:6.2f}  max {max(ends) / 1e3:6.2f}")
