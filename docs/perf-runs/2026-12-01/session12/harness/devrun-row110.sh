#!/usr/bin/env bash
# Row 110: the `span` build (apply_span.py) in the tenth session's harness, timed as always, then
# each sel arm's graph of 10 launches once more with every launch's first entry and last warp end
# recorded (HARNESS_TIMELINE; the first call, run-row110a/, with atomics shared by all warps, the
# second with records of each warp's own: apply_span.py as committed). Carries bundle/kh.
set -euo pipefail
export LD_LIBRARY_PATH=$PWD/bundle/kh/lib
res=$(mktemp -d)
date -u > "$res/date.txt"
for round in 1 2; do
  HARNESS_TIMELINE="$res/span-r$round.tsv" bundle/kh/span span > "$res/r$round-span.tsv"
done
tar -C "$res" -czf "$OUT/run.tar.gz" .
python3 docs/perf-runs/2026-12-01/session12/harness/span_summary.py "$res"/span-r*.tsv
grep -P '\tgraph\t' "$res"/r*-span.tsv | grep -v ring
