#!/usr/bin/env python3
"""Reads the warp records that timeline.patch's kernels leave in a per-slot output (`gpuprobe
check --dump`'s *_h_out.npy or *_y_out.npy) and prints where a launch's time goes: each warp's
record is 6 uint32 words (magic | warp, block | smid << 16, entry time in ns (the global timer's
low 32 bits), groups landed | prologue issued << 16 and staged | first item end << 16 as deltas in
8 ns units, end as a delta in ns). Writes one row per warp to OUT_TSV. With timeline-k8-passes.patch
the record has a 7th word, the flat index of 5 words over the warp's first tile that hold the
intervals (8 bits each, 32 ns units) between its passes' landings, the first from its start; given
BYTES_PER_PASS, the bytes those passes bring are summed per microsecond of the launch."""
import struct
import sys


def words_of(npy_path):
    with open(npy_path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", npy_path
    if data[6] == 1:
        header_len = struct.unpack("<H", data[8:10])[0]
        start = 10 + header_len
    else:
        header_len = struct.unpack("<I", data[8:12])[0]
        start = 12 + header_len
    n = (len(data) - start) // 4
    return struct.unpack("<%dI" % n, data[start:start + 4 * n])


def percentiles(values):
    v = sorted(values)
    pick = lambda q: v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]
    return "min %7.2f  p10 %7.2f  p50 %7.2f  p90 %7.2f  max %7.2f" % (
        v[0], pick(0.1), pick(0.5), pick(0.9), v[-1])


def pass_landings(w, index, t0):
    """A warp's passes' landing times (ns after its start), from the 5 words at index."""
    times, t = [], 0
    for k in range(20):
        interval = (w[index + k // 4] >> (8 * (k % 4))) & 0xFF
        if interval == 0:
            break
        t += 32 * interval
        times.append(t)
    return times


def main(npy_path, out_tsv, bytes_per_pass=None):
    w = words_of(npy_path)
    records = []
    landings = []
    for i in range(len(w) - 5):
        if w[i] >> 16 == 0x7A5E and (w[i + 1] & 0xFFFF) < 4096 and (w[i + 1] >> 16) < 1024:
            warp = w[i] & 0xFFFF
            block, smid = w[i + 1] & 0xFFFF, w[i + 1] >> 16
            t0, a, b, end = w[i + 2], w[i + 3], w[i + 4], w[i + 5]
            records.append((block, warp, smid, t0, 8 * (a & 0xFFFF), 8 * (a >> 16),
                            8 * (b & 0xFFFF), 8 * (b >> 16), end))
            if bytes_per_pass and w[i + 6] < len(w) - 5:
                landings.append((t0, pass_landings(w, w[i + 6], t0)))
    if not records:
        print("%s: no records" % npy_path)
        return
    base = min(r[3] for r in records)
    us = lambda ns: ns / 1000.0
    with open(out_tsv, "w") as f:
        f.write("block\twarp\tsmid\tstart_us\tgroups_us\tprologue_us\tstaged_us\tfirst_item_us\tend_us\n")
        for r in sorted(records):
            s = (r[3] - base) & 0xFFFFFFFF
            f.write("%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n" % (
                r[0], r[1], r[2], us(s), us(s + r[4]), us(s + r[5]), us(s + r[6]), us(s + r[7]),
                us(s + r[8])))
    rel = [((r[3] - base) & 0xFFFFFFFF) for r in records]
    print("%s: %d warp records, %d blocks" % (npy_path, len(records), len({r[0] for r in records})))
    print("  (us from the launch's first warp start)")
    print("  warp start         ", percentiles([us(s) for s in rel]))
    print("  groups landed      ", percentiles([us(s + r[4]) for s, r in zip(rel, records)]))
    print("  prologue issued    ", percentiles([us(s + r[5]) for s, r in zip(rel, records)]))
    print("  inputs staged      ", percentiles([us(s + r[6]) for s, r in zip(rel, records)]))
    print("  first item end     ", percentiles([us(s + r[7]) for s, r in zip(rel, records)]))
    print("  warp end           ", percentiles([us(s + r[8]) for s, r in zip(rel, records)]))
    blocks = {}
    for s, r in zip(rel, records):
        lo, hi = blocks.get(r[0], (1e18, 0))
        blocks[r[0]] = (min(lo, s), max(hi, s + r[8]))
    print("  block end          ", percentiles([us(hi) for lo, hi in blocks.values()]))
    print("  block span         ", percentiles([us(hi - lo) for lo, hi in blocks.values()]))
    warps_by_block = {}
    for s, r in zip(rel, records):
        warps_by_block.setdefault(r[0], []).append(us(s + r[8]))
    spread = [max(v) - min(v) for v in warps_by_block.values()]
    print("  warp ends within a block (max - min)", percentiles(spread))
    if landings:
        bins = {}
        for t0, times in landings:
            for t in times:
                b = int(us(((t0 - base) & 0xFFFFFFFF) + t))
                bins[b] = bins.get(b, 0) + bytes_per_pass
        print("  %d warps' pass landings; TB/s they bring per microsecond of the launch:" % len(landings))
        print("   ", " ".join("%d:%.2f" % (b, bins[b] / 1e6) for b in sorted(bins)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else None)
