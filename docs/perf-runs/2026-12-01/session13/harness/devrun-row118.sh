#!/usr/bin/env bash
# Row 118: `base`, `kwt` (row 113: no tile writes) and `mkx` (row 117's marks) with the harness's
# global scales at 1 (as every earlier row) and at 2^-17 (HARNESS_GLOBAL: the gate+up outputs at
# the daemon's magnitudes), two rounds each, then mkx's marks by rank. Later rows name their
# builds and scales: BUILDS="base mkx mkx2" GLOBALS=7.62939453125e-06 (row 119); builds whose name
# starts with mkx record their marks. Carries bundle/kh.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/bundle/kh/lib
res=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv > "$res/gpu.txt"
date -u > "$res/date.txt"
for round in 1 2; do
  for g in ${GLOBALS:-1 7.62939453125e-06}; do
    tag=g$([[ $g == 1 ]] && echo 1 || echo 2e-17)
    for b in ${BUILDS:-base kwt mkx}; do
      env=(HARNESS_GLOBAL=$g)
      [[ $b == mkx* ]] && env+=(HARNESS_TIMELINE="$res/timeline-r$round-$b-$tag.tsv")
      env "${env[@]}" bundle/kh/$b "$b-$tag" > "$res/r$round-$b-$tag.tsv" 2> "$res/r$round-$b-$tag.err" ||
        echo "r$round $b $tag failed: $(tail -1 "$res/r$round-$b-$tag.err")"
    done
  done
done
tar -C "$res" -czf "$OUT/run.tar.gz" .
python3 docs/perf-runs/2026-12-01/session13/harness/mkx_summary.py "$res"/timeline-r*.tsv
for f in "$res"/r*.tsv; do tail -n +2 "$f" | sed "s/^/$(basename "$f" .tsv | cut -c1-2)\t/"; done |
  awk -F'\t' '$4 == "graph"' | grep -v ring | sort -t$'\t' -k3,3 -k2,2 -k1,1
