#!/usr/bin/env bash
# Lever table row 38 (a measurement): an oracle deal for the per-slot gate+up at t = 6
# (oracle.patch: each block's range in proportion to its speed in row 35's warm timelines, at most
# 40 tiles on 20 warps). bundle/oracle: the kernels with it; bundle/woracle: with row 32's records
# and ../passes/warm-runonce.patch as well; bundle/wts: the same records on the plain kernels. Timelines of
# warm check launches (two each), then base and oracle timed twice (`gpu-bench.sh --quick`).
set -u
source deploy/await-daemon.sh
here=docs/perf-runs/2026-11-30/session5/timeline
out=$OUT/run
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/bundle/lib
for v in oracle woracle wts; do cp bundle/bin/gpuprobe bundle/$v/bin/; ln -sfn "$PWD/bundle/lib" bundle/$v/lib; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
for v in woracle wts; do
  bundle/$v/bin/gpuprobed --listen 127.0.0.1:0 --backend cuda --http "" --data-dir "$(mktemp -d)" >"$out/daemon-$v.log" 2>&1 &
  daemon=$!
  GPUPROBE_SERVER=$(await_gpuprobed "$out/daemon-$v.log" $daemon) || exit 1
  export GPUPROBE_SERVER
  for round in 1 2; do
    dump=$(mktemp -d)
    bundle/$v/bin/gpuprobe check --t 6 --unions 60 --variant per-slot --dump "$dump" >"$out/check-$v-$round.txt" 2>&1
    python3 $here/timeline.py "$dump/per-slot_t6_u60_h_out.npy" "$out/timeline-$v-h-$round.tsv" >"$out/summary-$v-h-$round.txt" 2>&1
    rm -rf "$dump"
  done
  kill -TERM $daemon; wait $daemon
done
for round in 1 2; do
  for v in base oracle; do
    dir=bundle/$v; [[ $v == base ]] && dir=bundle
    deploy/gpu-bench.sh "$dir" "$out/$v-$round" --quick
  done
done
date -u >> "$out/date.txt"
cat "$out"/summary-*.txt
for round in 1 2; do for v in base oracle; do echo "== $v-$round $(tail -n 1 "$out/$v-$round/check.txt")"; grep -v "^#" "$out/$v-$round/targets.tsv" | cut -f1-8,12 | grep -v "^t"; done; done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
