#!/usr/bin/env python3
"""Summarises bench/gpu-launch-ab.sh's sweeps: for each sweep (default sweep and targets, events
and graph), every arm's gate+up and down medians in base1, base2, new1 and new2, and the mean,
least and largest difference of the new runs' mean from the base runs' mean.

usage: bench/launch-ab-summary.py OUT_DIR   (prints to stdout)
"""
import os
import statistics
import sys

RUNS = ("base1", "base2", "new1", "new2")


def parse(path):
    """{sweep name: {(variant, t, union): (gu_us, down_us)}} of one run's TSV."""
    sweeps, sweep, header = {}, None, None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("# ===="):
            sweep = line[len("# ==== "):]
            sweeps[sweep], header = {}, None
        elif line and not line.startswith(("#", "gpuprobe:")):
            cells = line.split("\t")
            if cells[0] in ("t", "variant"):
                header = cells
                continue
            row = dict(zip(header, cells))
            key = (row.get("variant", "per-slot"), int(row["t"]), int(row["union"]))
            sweeps[sweep][key] = (float(row["gu_us"]), float(row["down_us"]))
    return sweeps


def main():
    out = sys.argv[1]
    runs = {run: parse(os.path.join(out, run + ".tsv")) for run in RUNS}
    for sweep, arms in runs["base1"].items():
        print("== %s: gate+up / down, us: base1 base2 | new1 new2" % sweep)
        deltas = ([], [])
        for key in arms:
            values = [runs[run][sweep][key] for run in RUNS]
            print("%s t=%d u=%d: " % key + "  ".join(
                "%.1f/%.1f" % v + (" |" if i == 1 else "") for i, v in enumerate(values)))
            for k in (0, 1):
                deltas[k].append((values[2][k] + values[3][k] - values[0][k] - values[1][k]) / 2)
        for name, d in zip(("gate+up", "down"), deltas):
            print("  new - base, %s: mean %+.2f us, from %+.2f to %+.2f over %d arms" %
                  (name, statistics.mean(d), min(d), max(d), len(d)))


if __name__ == "__main__":
    main()
