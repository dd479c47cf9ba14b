#!/usr/bin/env python3
"""Row 133: an ncu source page (`gpu-profile.sh`'s profile/source-N.csv: one line per SASS
instruction with its executions and stall samples) grouped by how many times each line ran, so a
kernel's loop, per-item, per-warp and row-walk code separate by their counts. Prints, per count,
the lines, the warp instructions they issued and their share of the stall samples, then the stall
reasons over all lines and over the lines run LOOP times (default: the count that issued the most
instructions, the loop's).
usage: region_counts.py source-N.csv [LOOP]"""
import collections
import csv
import sys


def number(text):
    try:
        return float(text)
    except ValueError:
        return 0.0


with open(sys.argv[1]) as page:
    rows = list(csv.reader(page))
kernel = rows[0][1]
rows = [r for r in rows if len(r) > 10]
header, lines = rows[0], rows[1:]
col = {name: i for i, name in enumerate(header)}
reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
seen, unique = set(), []
for line in lines:  # a page may repeat a kernel's listing: keep each address once
    if line[col["Address"]] not in seen:
        seen.add(line[col["Address"]])
        unique.append(line)
executions = [int(number(line[col["Instructions Executed"]])) for line in unique]
issued, count, samples = collections.Counter(), collections.Counter(), collections.Counter()
for line, runs in zip(unique, executions):
    issued[runs] += runs
    count[runs] += 1
    samples[runs] += number(line[col["Warp Stall Sampling (All Samples)"]])
loop = int(sys.argv[2]) if len(sys.argv) > 2 else max(issued, key=issued.get)
by_reason, in_loop = collections.Counter(), collections.Counter()
for line, runs in zip(unique, executions):
    for reason in reasons:
        by_reason[reason] += number(line[col[reason]])
        if runs == loop:
            in_loop[reason] += number(line[col[reason]])
total_issued, total_samples = sum(issued.values()), sum(samples.values())
print(f"{kernel}: {total_issued / 1e6:.2f} M warp instructions")
print("runs\tlines\tM instructions\tshare\tstall samples")
for runs in sorted(issued, key=lambda r: -issued[r]):
    if runs and issued[runs] >= 0.01 * total_issued:
        print(f"{runs}\t{count[runs]}\t{issued[runs] / 1e6:.2f}\t{100 * issued[runs] / total_issued:.0f}%"
              f"\t{100 * samples[runs] / total_samples:.1f}%")
loop_samples = sum(in_loop.values()) or 1
print(f"stall reason\tall lines\tlines run {loop} times")
for reason, value in by_reason.most_common():
    if value:
        print(f"{reason[6:]}\t{100 * value / total_samples:.1f}%\t{100 * in_loop[reason] / loop_samples:.1f}%")
