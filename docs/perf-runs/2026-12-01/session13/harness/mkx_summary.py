#!/usr/bin/env python3
"""Row 117: the cluster K halves' end by rank, from apply_mkx.py builds' marks.

Per warp (the harness's marks format: ns after the warp's entry, -1 not reached): 1 loop end,
2 after ClusterWait, 3 rank 0 before its wait / rank 1 sums sent, 4 rank 0 wait over / rank 1
out_scale sent, 5 rank 0 tile written. Per file, arm and rank (block index parity): each mark's
median and max in us after the launch's first entry, and each step's median per warp.
usage: mkx_summary.py timeline-*.tsv
"""
import statistics
import sys

for path in sys.argv[1:]:
    arms = {}
    for line in open(path):
        build, arm, block, smid, warp, t0, *marks = line.split("\t")
        arms.setdefault(arm, []).append((int(block), int(t0), [int(m) for m in marks]))
    for arm, warps in arms.items():
        start = min(t0 for _, t0, _ in warps)
        print(f"{path} {arm} ({len(warps)} warps), us after the first entry:")
        for rank in (0, 1):
            last = 4 if rank == 1 else 9 if any(m[8] >= 0 for b, _, m in warps) else 5
            mine = [(t0, m) for b, t0, m in warps if b % 2 == rank and min(m[:last]) >= 0]
            if not mine:
                continue
            for k in range(1, last + 1):
                v = [(t0 - start) % (1 << 32) + m[k - 1] for t0, m in mine]
                line = (f"  rank {rank} mark {k} median {statistics.median(v) / 1e3:6.2f} "
                        f"max {max(v) / 1e3:6.2f}")
                if k > 1:
                    d = [m[k - 1] - m[k - 2] for _, m in mine]
                    line += (f"   step {k - 1}->{k} median {statistics.median(d) / 1e3:5.2f} "
                             f"max {max(d) / 1e3:5.2f}")
                print(line + f"  ({len(mine)} warps)")
