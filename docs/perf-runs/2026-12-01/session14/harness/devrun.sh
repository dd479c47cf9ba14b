#!/usr/bin/env bash
# The fourteenth session's harness calls (session13/harness/devrun-row118.sh with this session's
# default builds and the global scales at 2^-17 only): BUILDS (default "base rin") in turn, two
# rounds, then the graph-timed medians of every arm. Carries bundle/kh.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/bundle/kh/lib
res=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv > "$res/gpu.txt"
date -u > "$res/date.txt"
for round in 1 2; do
  for g in ${GLOBALS:-7.62939453125e-06}; do
    tag=g$([[ $g == 1 ]] && echo 1 || echo 2e-17)
    for b in ${BUILDS:-base rin}; do
      env=(HARNESS_GLOBAL=$g)
      [[ $b == mkx* ]] && env+=(HARNESS_TIMELINE="$res/timeline-r$round-$b-$tag.tsv")
      env "${env[@]}" bundle/kh/$b "$b-$tag" > "$res/r$round-$b-$tag.tsv" 2> "$res/r$round-$b-$tag.err" ||
        echo "r$round $b $tag failed: $(tail -1 "$res/r$round-$b-$tag.err")"
    done
  done
done
tar -C "$res" -czf "$OUT/run.tar.gz" .
for f in "$res"/r*.tsv; do tail -n +2 "$f" | sed "s/^/$(basename "$f" .tsv | cut -c1-2)\t/"; done |
  awk -F'\t' '$4 == "graph"' | grep -v ring | sort -t$'\t' -k3,3 -k2,2 -k1,1
