#!/usr/bin/env python3
"""Rows 90-94: summarizes the harness's per-warp records (HARNESS_TIMELINE files).

Two formats, told apart by their width: the tl*.patch builds' five events (row 90) and the
mk*.patch builds' nine marks (row 94), each in ns after the warp's entry (-1: not reached). For
each file and arm: the launch starts at the earliest warp entry; per warp, its entry and its events
in us after that, as median / p90 / max over the warps that reached each; then the blocks' ends
(their last warp's loop end), min / median / max.
usage: timeline_summary.py timeline-*.tsv[.gz]
"""
import gzip
import statistics
import sys

EVENTS = {
    5: ["prologue begins", "prologue issued", "staged", "first item end", "loop end"],
    9: ["prologue start", "prologue end", "barrier 1", "barrier 2", "inputs landed",
        "maxima met", "staged", "first item end", "loop end"],
}


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


for path in sys.argv[1:]:
    arms = {}
    for line in (gzip.open(path, "rt") if path.endswith(".gz") else open(path)):
        build, arm, block, smid, warp, t0, *events = line.split("\t")
        arms.setdefault(arm, []).append((int(block), int(t0), [int(e) for e in events]))
    for arm, warps in arms.items():
        names = ["entry"] + EVENTS[len(warps[0][2])]
        start = min(t0 for _, t0, _ in warps)
        rows = {name: [] for name in names}
        block_end = {}
        for block, t0, events in warps:
            entry = (t0 - start) % (1 << 32)
            rows["entry"].append(entry)
            for name, e in zip(names[1:], events):
                if e >= 0:
                    rows[name].append(entry + e)
            if events[-1] >= 0:
                block_end[block] = max(block_end.get(block, 0), entry + events[-1])
        print(f"{path} {arm} ({len(warps)} warps, {len(block_end)} blocks), us after the first entry:")
        for name in names:
            v = rows[name]
            if v:
                print(f"  {name:16s} median {statistics.median(v) / 1e3:6.2f}  p90 "
                      f"{pct(v, 0.9) / 1e3:6.2f}  max {max(v) / 1e3:6.2f}  ({len(v)} warps)")
        ends = list(block_end.values())
        print(f"  {'block ends':16s} min {min(ends) / 1e3:6.2f}  median "
              f"{statistics.median(ends) / 1e3:6.2f}  max {max(ends) / 1e3:6.2f}")
