#!/usr/bin/env python3
"""Row 115: the union-10 gate+up's ends by cluster rank, from apply_tlx.py builds' timelines.

Per warp (events in ns after its entry, session11/harness/timeline_summary.py's format): e5 its
loop's end, e4 the exchange (rank 0: its wait for K half 1's bytes over; rank 1: its sums sent),
e1 its end. Per file and rank (block index parity), medians and maxima of those in us after the
launch's first entry, and per warp the steps loop end -> exchange -> end.
usage: tlx_summary.py timeline-*.tsv
"""
import statistics
import sys

for path in sys.argv[1:]:
    warps = []
    for line in open(path):
        build, arm, block, smid, warp, t0, *events = line.split("\t")
        if arm == "union10-gu":
            warps.append((int(block), int(t0), [int(e) for e in events]))
    if not warps:
        continue
    start = min(t0 for _, t0, _ in warps)
    print(f"{path} union10-gu ({len(warps)} warps), us after the first entry:")
    for rank in (0, 1):
        rows = {"loop end": [], "exchange": [], "end": [], "loop end->exchange": [],
                "exchange->end": []}
        for block, t0, e in warps:
            if block % 2 != rank or min(e[0], e[3], e[4]) < 0:
                continue
            entry = (t0 - start) % (1 << 32)
            rows["loop end"].append(entry + e[4])
            rows["exchange"].append(entry + e[3])
            rows["end"].append(entry + e[0])
            rows["loop end->exchange"].append(e[3] - e[4])
            rows["exchange->end"].append(e[0] - e[3])
        for name, v in rows.items():
            if v:
                print(f"  rank {rank} {name:20s} median {statistics.median(v) / 1e3:6.2f}  "
                      f"max {max(v) / 1e3:6.2f}  min {min(v) / 1e3:6.2f}  ({len(v)} warps)")
