#!/usr/bin/env bash
# Lever table row 35, second run: the check's kept launch made the tenth of ten back to back
# (warm-runonce.patch), so it finds the L2 as a warm graph-timed launch does. bundle/wk8p: k8 with
# the pass landings; bundle/wts: the full kernels with row 32's records. Two check launches each.
set -u
source deploy/await-daemon.sh
here=docs/perf-runs/2026-11-30/session5/timeline
out=$OUT/run
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/bundle/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
for v in wk8p wts; do
  bundle/$v/bin/gpuprobed --listen 127.0.0.1:0 --backend cuda --http "" --data-dir "$(mktemp -d)" >"$out/daemon-$v.log" 2>&1 &
  daemon=$!
  GPUPROBE_SERVER=$(await_gpuprobed "$out/daemon-$v.log" $daemon) || exit 1
  export GPUPROBE_SERVER
  for round in 1 2; do
    dump=$(mktemp -d)
    bundle/$v/bin/gpuprobe check --t 6 --unions 60 --variant per-slot --dump "$dump" >"$out/check-$v-$round.txt" 2>&1
    gu_bytes=""; dn_bytes=""; [[ $v == wk8p ]] && { gu_bytes=2304; dn_bytes=1152; }
    python3 $here/timeline.py "$dump/per-slot_t6_u60_h_out.npy" "$out/timeline-$v-h-$round.tsv" $gu_bytes >"$out/summary-$v-h-$round.txt" 2>&1
    python3 $here/timeline.py "$dump/per-slot_t6_u60_y_out.npy" "$out/timeline-$v-y-$round.tsv" $dn_bytes >"$out/summary-$v-y-$round.txt" 2>&1
    rm -rf "$dump"
  done
  kill -TERM $daemon; wait $daemon
done
date -u >> "$out/date.txt"
cat "$out"/summary-*-h-*.txt
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
