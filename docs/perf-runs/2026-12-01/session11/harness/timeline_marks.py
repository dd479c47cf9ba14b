#!/usr/bin/env python3
"""Row 94: summarizes the harness's mark records (mk*.patch builds, devrun-timeline.sh).

For each file and arm: the launch starts at the earliest warp entry; per warp, its entry and its
marks (prologue start and end, the staging's first and second barrier, the inputs' wait, the row
maxima met, staged, first item's end, loop's end) in us after that, as median / p90 / max over the
warps that reached the mark; then the blocks' ends (their last warp's loop end), min / median / max.
usage: timeline_marks.py timeline-*.tsv
"""
import statistics
import sys

MARKS = ["entry", "prologue start", "prologue end", "barrier 1", "barrier 2", "inputs landed",
         "maxima met", "staged", "first item end", "loop end"]


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


for path in sys.argv[1:]:
    arms = {}
    for line in open(path):
        build, arm, block, smid, warp, t0, *marks = line.split("\t")
        arms.setdefault(arm, []).append((int(block), int(t0), [int(m) for m in marks]))
    for arm, warps in arms.items():
        start = min(t0 for _, t0, _ in warps)
        rows = {name: [] for name in MARKS}
        block_end = {}
        for block, t0, marks in warps:
            entry = (t0 - start) % (1 << 32)
            rows["entry"].append(entry)
            for name, m in zip(MARKS[1:], marks):
                if m >= 0:
                    rows[name].append(entry + m)
            if marks[-1] >= 0:
                block_end[block] = max(block_end.get(block, 0), entry + marks[-1])
        print(f"{path} {arm} ({len(warps)} warps), us after the first entry:")
        for name in MARKS:
            v = rows[name]
            if v:
                print(f"  {name:15s} median {statistics.median(v) / 1e3:6.2f}  p90 "
                      f"{pct(v, 0.9) / 1e3:6.2f}  max {max(v) / 1e3:6.2f}  ({len(v)} warps)")
        ends = list(block_end.values())
        print(f"  {'block ends':15s} min {min(ends) / 1e3:6.2f}  median "
              f"{statistics.median(ends) / 1e3:6.2f}  max {max(ends) / 1e3:6.2f}")
