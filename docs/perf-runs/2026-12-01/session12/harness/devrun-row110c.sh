#!/usr/bin/env bash
# Row 110, third call: `tlend` (apply_tlend.py: row 90's per-warp timeline with event 1 replaced
# by the warp's end) beside `base`, two rounds each, then the timelines summarized
# (session11/harness/timeline_summary.py; its "prologue begins" is the warp's end here).
# Carries bundle/kh.
set -euo pipefail
export LD_LIBRARY_PATH=$PWD/bundle/kh/lib
res=$(mktemp -d)
date -u > "$res/date.txt"
for round in 1 2; do
  bundle/kh/base base > "$res/r$round-base.tsv"
  HARNESS_TIMELINE="$res/timeline-r$round-tlend.tsv" bundle/kh/tlend tlend > "$res/r$round-tlend.tsv"
done
tar -C "$res" -czf "$OUT/run.tar.gz" .
python3 docs/perf-runs/2026-12-01/session11/harness/timeline_summary.py "$res"/timeline-r*-tlend.tsv
grep -P '\tgraph\t' "$res"/r*-*.tsv | grep -v ring | grep -E 'union10|\tsel\t|\tdown\t'
