#!/usr/bin/env bash
# Row 89: the harness's `base` build timed as always and with HARNESS_LEAD=1 (each sample's timed
# launches preceded by one launch of the same arm outside the events), alternating, three times
# each. Carries bundle/kh (session10/harness/build.sh bundle/kh base). Output packed in run.tar.gz.
set -euo pipefail
cd bundle/kh
export LD_LIBRARY_PATH=$PWD/lib
res=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv > "$res/gpu.txt"
date -u > "$res/date.txt"
for round in 1 2 3; do
  ./base base > "$res/r$round-base.tsv"
  HARNESS_LEAD=1 ./base lead > "$res/r$round-lead.tsv"
done
tar -C "$res" -czf "$OUT/run.tar.gz" .
for f in "$res"/r*.tsv; do tail -n +2 "$f" | sed "s/^/$(basename "$f" .tsv | cut -c1-2)\t/"; done |
  awk -F'\t' '$4 == "graph" && $3 !~ /^ring-/' | sort -t$'\t' -k3,3 -k2,2 -k1,1
