#!/usr/bin/env bash
# Row 110: the `span` build (apply_span.py) in the tenth session's harness, timed as always, then
# each sel arm's graph of 10 launches once more with every launch's first entry and last warp end
# recorded (HARNESS_TIMELINE). Carries bundle/kh.
set -euo pipefail
cd bundle/kh
export LD_LIBRARY_PATH=$PWD/lib
res=$(mktemp -d)
date -u > "$res/date.txt"
for round in 1 2; do
  HARNESS_TIMELINE="$res/span-r$round.tsv" ./span span > "$res/r$round-span.tsv"
done
tar -C "$res" -czf "$OUT/run.tar.gz" .
cat "$res"/span-r*.tsv
grep -P '\tgraph\t' "$res"/r*-span.tsv | grep -v ring
