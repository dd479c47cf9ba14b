#!/usr/bin/env bash
# Row 115: `base`, `wtprep` (the cluster gate+up's tile outputs found before rank 0 waits for the
# exchange) and their timelines `tlx`, `tlxw` (apply_tlx.py: loop end, exchange, end of every
# warp), two rounds each in the tenth session's harness, then the union-10 gate+up's ends by rank.
# Later rows name other builds: BUILDS="base warm tlx tlxwarm" (row 116), "base kwt mkx mkxkwt"
# (row 117); a build whose name starts with tlx or mkx writes its records (HARNESS_TIMELINE).
# Carries bundle/kh.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/bundle/kh/lib
res=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv > "$res/gpu.txt"
date -u > "$res/date.txt"
run() {  # round build
  local env=()
  [[ $2 == tlx* || $2 == mkx* ]] && env=(HARNESS_TIMELINE="$res/timeline-r$1-$2.tsv")
  env "${env[@]}" bundle/kh/"$2" "$2" > "$res/r$1-$2.tsv" 2> "$res/r$1-$2.err" ||
    echo "r$1 $2 failed: $(tail -1 "$res/r$1-$2.err")"
}
builds=(${BUILDS:-base wtprep tlx tlxw})
for b in "${builds[@]}"; do run 1 "$b"; done
for ((i = ${#builds[@]} - 1; i >= 0; --i)); do run 2 "${builds[i]}"; done
tar -C "$res" -czf "$OUT/run.tar.gz" .
shopt -s nullglob
tlx=("$res"/timeline-r*-tlx*.tsv) mkx=("$res"/timeline-r*-mkx*.tsv)
((${#tlx[@]})) && python3 docs/perf-runs/2026-12-01/session13/harness/tlx_summary.py "${tlx[@]}"
((${#mkx[@]})) && python3 docs/perf-runs/2026-12-01/session13/harness/mkx_summary.py "${mkx[@]}"
for f in "$res"/r*.tsv; do tail -n +2 "$f" | sed "s/^/$(basename "$f" .tsv | cut -c1-2)\t/"; done |
  awk -F'\t' '$4 == "graph"' | grep -v ring | sort -t$'\t' -k3,3 -k2,2 -k1,1
