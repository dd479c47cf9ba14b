#!/usr/bin/env python3
"""Reads the warp records that staging-timeline.patch's kernels leave in place of a launch's outputs
(`gpuprobe check --dump`'s *_h_out.npy or *_y_out.npy): 8 uint32 words per warp at index
(block * 32 + warp) * 8: magic | warp, block | smid << 16, entry time in ns (the global timer's low
32 bits), group data landed | prologue issued << 16 and inputs staged | first item end << 16 in
8 ns units after entry, then the loop's end (for a split plan's tile writer: its tile written) in
ns after entry, then (this patch) global scales stored | inputs landed << 16 and after the barrier
that follows | row maxima done << 16, in 8 ns units after entry. Prints, in us from the launch's
first warp entry, the percentiles of each event
over warps and of each block's end."""
import struct
import sys


def words_of(npy_path):
    with open(npy_path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", npy_path
    if data[6] == 1:
        start = 10 + struct.unpack("<H", data[8:10])[0]
    else:
        start = 12 + struct.unpack("<I", data[8:12])[0]
    n = (len(data) - start) // 4
    return struct.unpack("<%dI" % n, data[start:start + 4 * n])


def percentiles(values):
    v = sorted(values)
    pick = lambda q: v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]
    return "min %6.2f  p10 %6.2f  p50 %6.2f  p90 %6.2f  max %6.2f" % (
        v[0], pick(0.1), pick(0.5), pick(0.9), v[-1])


def main(npy_path):
    w = words_of(npy_path)
    records = []
    for i in range(0, len(w) - 7, 8):
        if w[i] >> 16 != 0x7A5E:
            continue
        block, smid = w[i + 1] & 0xFFFF, w[i + 1] >> 16
        a, b, m6, m7 = w[i + 3], w[i + 4], w[i + 6], w[i + 7]
        records.append(dict(block=block, warp=w[i] & 0xFFFF, smid=smid, t0=w[i + 2],
                            groups=8 * (a & 0xFFFF), prologue=8 * (a >> 16),
                            staged=8 * (b & 0xFFFF), first=8 * (b >> 16), end=w[i + 5],
                            scales=8 * (m6 & 0xFFFF), inputs=8 * (m6 >> 16),
                            barrier=8 * (m7 & 0xFFFF), maxima=8 * (m7 >> 16)))
    if not records:
        sys.exit("%s: no warp records" % npy_path)
    base = min(r["t0"] for r in records)
    us = lambda r, key: ((r["t0"] - base) + (r[key] if key != "t0" else 0)) / 1000.0
    blocks = {r["block"] for r in records}
    print("%s: %d warps of %d blocks" % (npy_path, len(records), len(blocks)))
    for key, what in [("t0", "warp entry"), ("groups", "group data landed"),
                      ("prologue", "prologue issued"), ("scales", "global scales stored"),
                      ("inputs", "inputs landed"), ("barrier", "barrier after inputs"),
                      ("maxima", "row maxima done"), ("staged", "inputs staged"),
                      ("first", "first item end"), ("end", "loop end (writers: tile written)")]:
        print("  %-34s %s" % (what, percentiles([us(r, key) for r in records])))
    # Warp 0 holds the threads that load the global scales (one per group of the block).
    for key, what in [("scales", "global scales stored, warp 0"),
                      ("inputs", "inputs landed, warp 0")]:
        print("  %-34s %s" % (what, percentiles([us(r, key) for r in records if r["warp"] == 0])))
    ends = {}
    for r in records:
        ends[r["block"]] = max(ends.get(r["block"], 0.0), us(r, "end"))
    print("  %-34s %s" % ("block end", percentiles(list(ends.values()))))


if __name__ == "__main__":
    for path in sys.argv[1:]:
        main(path)
