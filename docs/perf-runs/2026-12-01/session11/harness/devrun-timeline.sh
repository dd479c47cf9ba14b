#!/usr/bin/env bash
# Rows 90-91: harness builds (row 90: base tl tleprol2, the default; row 91: base gsl eprol2gsl
# tlgsl tleprol2gsl), twice each in turn; the timeline builds (tl*: apply_timeline.py's records)
# also write each sel arm's last launch's per-warp records (HARNESS_TIMELINE). Carries bundle/kh
# (PATCHES=session11/harness session10/harness/build.sh bundle/kh BUILDS...). Output packed in
# run.tar.gz.
# usage: devrun-timeline.sh [BUILDS...]
set -euo pipefail
cd bundle/kh
export LD_LIBRARY_PATH=$PWD/lib
res=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv > "$res/gpu.txt"
date -u > "$res/date.txt"
builds=("$@")
[[ ${#builds[@]} -gt 0 ]] || builds=(base tl tleprol2)
for round in 1 2; do
  for b in "${builds[@]}"; do
    HARNESS_TIMELINE="$res/timeline-r$round-$b.tsv" ./"$b" "$b" > "$res/r$round-$b.tsv"
  done
done
find "$res" -name 'timeline-*.tsv' -empty -delete
tar -C "$res" -czf "$OUT/run.tar.gz" .
for f in "$res"/r*.tsv; do tail -n +2 "$f" | sed "s/^/$(basename "$f" .tsv | cut -c1-2)\t/"; done |
  awk -F'\t' '$4 == "graph" && $3 !~ /^ring-/' | sort -t$'\t' -k3,3 -k2,2 -k1,1
