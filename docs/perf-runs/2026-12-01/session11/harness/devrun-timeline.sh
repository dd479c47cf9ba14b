#!/usr/bin/env bash
# Row 90: the harness's `base` build and the timeline builds `tl` (the committed kernels with
# apply_timeline.py's records) and `tleprol2` (row 88's eprol2 with them), twice each in turn;
# the timeline builds also write each sel arm's last launch's per-warp records
# (HARNESS_TIMELINE). Carries bundle/kh (session10/harness/build.sh bundle/kh base tl tleprol2,
# PATCHES=session11/harness). Output packed in run.tar.gz.
set -euo pipefail
cd bundle/kh
export LD_LIBRARY_PATH=$PWD/lib
res=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv > "$res/gpu.txt"
date -u > "$res/date.txt"
for round in 1 2; do
  for b in base tl tleprol2; do
    HARNESS_TIMELINE="$res/timeline-r$round-$b.tsv" ./"$b" "$b" > "$res/r$round-$b.tsv"
  done
done
rm -f "$res"/timeline-*-base.tsv
tar -C "$res" -czf "$OUT/run.tar.gz" .
for f in "$res"/r*.tsv; do tail -n +2 "$f" | sed "s/^/$(basename "$f" .tsv | cut -c1-2)\t/"; done |
  awk -F'\t' '$4 == "graph" && $3 !~ /^ring-/' | sort -t$'\t' -k3,3 -k2,2 -k1,1
