#!/usr/bin/env bash
# Row 103: the cluster kernels leaving at once (cexit0) and without their exchange (cnox), against
# the committed kernels, in the tenth session's harness: two rounds as its devrun.sh, but a build
# that fails is reported and the others still run. Carries bundle/kh.
set -uo pipefail
builds=(${BUILDS:-base cexit0 cnox})
cd bundle/kh
export LD_LIBRARY_PATH=$PWD/lib
res=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv > "$res/gpu.txt"
date -u > "$res/date.txt"
for b in "${builds[@]}"; do ./"$b" "$b" > "$res/r1-$b.tsv" 2> "$res/r1-$b.err" || echo "r1 $b failed: $(tail -1 "$res/r1-$b.err")"; done
for ((i = ${#builds[@]} - 1; i >= 0; --i)); do b=${builds[i]}; ./"$b" "$b" > "$res/r2-$b.tsv" 2> "$res/r2-$b.err" || echo "r2 $b failed: $(tail -1 "$res/r2-$b.err")"; done
tar -C "$res" -czf "$OUT/run.tar.gz" .
for f in "$res"/r*.tsv; do tail -n +2 "$f" | sed "s/^/$(basename "$f" .tsv | cut -c1-2)\t/"; done |
  awk -F'\t' '$4 == "graph"' | grep -v ring | sort -t$'\t' -k3,3 -k2,2 -k1,1
