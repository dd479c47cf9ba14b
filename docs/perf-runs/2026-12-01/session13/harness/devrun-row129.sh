#!/usr/bin/env bash
# Row 129: row 94's marks (session11/harness/apply_marks.py, applied to the committed kernels:
# `mk`) beside `base`, two rounds at the harness's global scales of 2^-17, then the marks
# summarized per arm (session11/harness/timeline_summary.py). Carries bundle/kh.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/bundle/kh/lib
res=$(mktemp -d)
date -u > "$res/date.txt"
for round in 1 2; do
  HARNESS_GLOBAL=7.62939453125e-06 bundle/kh/base base > "$res/r$round-base.tsv"
  HARNESS_GLOBAL=7.62939453125e-06 HARNESS_TIMELINE="$res/timeline-r$round-mk.tsv" bundle/kh/mk mk \
    > "$res/r$round-mk.tsv"
done
tar -C "$res" -czf "$OUT/run.tar.gz" .
python3 docs/perf-runs/2026-12-01/session11/harness/timeline_summary.py "$res"/timeline-r*-mk.tsv
grep -hP '\tgraph\t' "$res"/r*-*.tsv | grep -E 'union10|\tsel\t|\tdown\t'
