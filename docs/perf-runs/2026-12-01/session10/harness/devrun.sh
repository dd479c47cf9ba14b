#!/usr/bin/env bash
# Row 65: every harness build twice, in turn (the second round in reverse order). Carries
# bundle/kh (harness/build.sh bundle/kh base k8 k8s k8sg k8w k8sgw).
set -euo pipefail
cd bundle/kh
export LD_LIBRARY_PATH=$PWD/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv > "$OUT/gpu.txt"
date -u > "$OUT/date.txt"
builds=(base k8 k8s k8sg k8w k8sgw)
for b in "${builds[@]}"; do ./"$b" "$b" > "$OUT/r1-$b.tsv"; done
for ((i = ${#builds[@]} - 1; i >= 0; --i)); do b=${builds[i]}; ./"$b" "$b" > "$OUT/r2-$b.tsv"; done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >> "$OUT/gpu.txt"
for f in "$OUT"/r*.tsv; do tail -n +2 "$f"; done | sort -t$'\t' -k2,2 -k3,3 -k1,1 | column -t
