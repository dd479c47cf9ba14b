#!/usr/bin/env bash
# Lever table row 35 (a measurement): when each pass lands. bundle/tsk8p is row 28's k8 with
# timeline-k8-passes.patch (row 32's records plus each warp's pass landings); two check launches
# at t = 6, union 60; the bytes the recorded passes bring, per microsecond of the launch.
set -u
source deploy/await-daemon.sh
here=docs/perf-runs/2026-11-30/session5/timeline
out=$OUT/run
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/bundle/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
bundle/tsk8p/bin/gpuprobed --listen 127.0.0.1:0 --backend cuda --http "" --data-dir "$(mktemp -d)" >"$out/daemon.log" 2>&1 &
daemon=$!
GPUPROBE_SERVER=$(await_gpuprobed "$out/daemon.log" $daemon) || exit 1
export GPUPROBE_SERVER
for round in 1 2 3; do
  dump=$(mktemp -d)
  bundle/tsk8p/bin/gpuprobe check --t 6 --unions 60 --variant per-slot --dump "$dump" >"$out/check-$round.txt" 2>&1
  python3 $here/timeline.py "$dump/per-slot_t6_u60_h_out.npy" "$out/timeline-h-$round.tsv" 2304 >"$out/summary-h-$round.txt" 2>&1
  python3 $here/timeline.py "$dump/per-slot_t6_u60_y_out.npy" "$out/timeline-y-$round.tsv" 1152 >"$out/summary-y-$round.txt" 2>&1
  rm -rf "$dump"
done
kill -TERM $daemon; wait $daemon
date -u >> "$out/date.txt"
cat "$out"/summary-*.txt
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
