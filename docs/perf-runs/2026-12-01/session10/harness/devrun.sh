#!/usr/bin/env bash
# Rows 65-75: every harness build named below twice, in turn (the second round in reverse order).
# Carries bundle/kh (harness/build.sh bundle/kh BUILDS...). Output packed in run.tar.gz.
set -euo pipefail
builds=("$@")
cd bundle/kh
export LD_LIBRARY_PATH=$PWD/lib
res=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv > "$res/gpu.txt"
date -u > "$res/date.txt"
for b in "${builds[@]}"; do ./"$b" "$b" > "$res/r1-$b.tsv"; done
for ((i = ${#builds[@]} - 1; i >= 0; --i)); do b=${builds[i]}; ./"$b" "$b" > "$res/r2-$b.tsv"; done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >> "$res/gpu.txt"
tar -C "$res" -czf "$OUT/run.tar.gz" .
for f in "$res"/r*.tsv; do tail -n +2 "$f" | sed "s/^/$(basename "$f" .tsv | cut -c1-2)\t/"; done |
  awk -F'\t' '$4 == "graph"' | sort -t$'\t' -k3,3 -k2,2 -k1,1
