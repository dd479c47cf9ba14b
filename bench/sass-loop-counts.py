#!/usr/bin/env python3
"""Instruction counts of a sel kernel's main loop from ncu's SASS-level source page.

usage: sass-loop-counts.py SOURCE_CSV [TITLE]

SOURCE_CSV is `ncu -i REPORT --page source --csv --print-source sass` for one launch. The weights
one lane multiplies per pass follow from the kernel's name, SelNvfp4Kernel<kGateUpSilu, kOneSlot,
kDeal, kOctets>: Tuning's chunks per thread (2 for gate+up, 1 for down) x octets x 32 (128 for
sel_gu_silu and the wide per-slot sel_down, 64 for the other sel_down). The passes are the execution count of the most executed mma (HMMA): the body
that runs on every pass shares it; instructions run on 70-99% of the passes are the ring refill
and the cursor. Prints the opcode counts of both groups and the warp instructions per weight: of the
body, with the refill (weighted by how often each runs), and of the whole launch.

Then the launch by phase, in address order: before the loop (start-up and staging: everything
below the first instruction of the body or the refill), the loop (from there to the last of
them), and after it (item ends, split sums, tile writes). For each: warp instructions per launched
warp (the first instruction's executions), its share of the warp stall samples, and, where the
page has ncu's `stall_*` columns, its most sampled stall reasons. A start-bound launch shows here.
"""
import collections
import csv
import re
import sys


Row = collections.namedtuple("Row", "sass executed samples stalls")
# Instructions run on at least this share of the passes (and on fewer than all) are the refill.
REFILL_SHARE = 0.7


def launch_rows(path):
    """The first launch's kernel name and instruction rows (Row: SASS text, warp-level executions,
    warp stall samples, and samples by stall reason)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    starts = [i for i, r in enumerate(rows) if r and r[0] == "Kernel Name"]
    if not starts:
        sys.exit(f"{path}: no 'Kernel Name' line; not an ncu source page")
    name = rows[starts[0]][1]
    end = starts[1] if len(starts) > 1 else len(rows)
    header = rows[starts[0] + 1]
    try:
        source = header.index("Source")
        executed = header.index("Instructions Executed")
        samples = header.index("Warp Stall Sampling (All Samples)")
    except ValueError:
        sys.exit(f"{path}: no Source / Instructions Executed / Warp Stall Sampling columns")
    reasons = {i: h[len("stall_"):] for i, h in enumerate(header)
               if h.startswith("stall_") and not h.endswith("(Not Issued)")}

    def number(text):
        return int(float(text or 0))

    return name, [Row(r[source].strip(), number(r[executed]), number(r[samples]),
                      collections.Counter({reason: number(r[i]) for i, reason in reasons.items()}))
                  for r in rows[starts[0] + 2:end] if r and r[0].startswith("0x")]


def weights_per_pass(kernel_name):
    """A lane's weights per pass of SelNvfp4Kernel<gate_up, one_slot, deal, octets>."""
    match = re.search(r"SelNvfp4Kernel<\(bool\)([01]), \(bool\)[01], [^,]+, \(int\)(\d+)>",
                      kernel_name)
    if not match:
        sys.exit(f"not a SelNvfp4Kernel launch: {kernel_name}")
    chunks_per_thread = 2 if match.group(1) == "1" else 1
    return chunks_per_thread * int(match.group(2)) * 32


def opcode(sass):
    words = sass.split()
    op = words[1] if words[0].startswith("@") else words[0]
    return op.split(".")[0]


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[2])
    name, rows = launch_rows(sys.argv[1])
    weights = weights_per_pass(name)
    title = sys.argv[2] if len(sys.argv) == 3 else sys.argv[1]
    mma = [r.executed for r in rows if opcode(r.sass) == "HMMA" and r.executed > 0]
    if not mma:
        sys.exit(f"{sys.argv[1]}: no executed HMMA; not a sel kernel's launch")
    passes = max(mma)
    body = collections.Counter(opcode(r.sass) for r in rows if r.executed == passes)
    refill = [(r.sass, r.executed) for r in rows if REFILL_SHARE * passes <= r.executed < passes]
    refill_ops = collections.Counter(opcode(s) for s, _ in refill)
    total = sum(r.executed for r in rows)
    with_refill = (sum(body.values()) * passes + sum(e for _, e in refill)) / passes
    print(f"# {title}: warp instructions per pass of {weights} weights per lane "
          f"({passes:,} passes)")
    print(f"executed on every pass ({sum(body.values())}): "
          + ", ".join(f"{k} {v}" for k, v in body.most_common()))
    print(f"executed on 70-99% of passes ({len(refill)}: the ring refill, IssuePass, and the "
          "cursor): " + ", ".join(f"{k} {v}" for k, v in refill_ops.most_common()))
    print(f"per weight: {sum(body.values()) / weights:.2f} on every pass, "
          f"{with_refill / weights:.2f} with the refill (weighted by executions); whole kernel "
          f"{total} warp instructions = {total / (passes * weights):.2f} per weight")
    print(phases(rows, passes))


def phases(rows, passes):
    """The launch before, in and after its loop: instructions a warp, stall samples, reasons."""
    warps = rows[0].executed
    in_loop = [i for i, r in enumerate(rows) if r.executed >= REFILL_SHARE * passes]
    bounds = [("before the loop", 0, in_loop[0]), ("the loop", in_loop[0], in_loop[-1] + 1),
              ("after it", in_loop[-1] + 1, len(rows))]
    all_samples = sum(r.samples for r in rows) or 1
    parts = []
    for label, first, end in bounds:
        part = rows[first:end]
        stalls = sum((r.stalls for r in part), collections.Counter())
        top = ", ".join(f"{reason} {n}" for reason, n in stalls.most_common(4) if n > 0)
        parts.append(f"{label} {sum(r.executed for r in part) / warps:.0f} "
                     f"({100 * sum(r.samples for r in part) / all_samples:.0f}% of samples"
                     + (f": {top})" if top else ")"))
    return f"phases, warp instructions a warp ({warps:,} warps): " + "; ".join(parts)


if __name__ == "__main__":
    main()
