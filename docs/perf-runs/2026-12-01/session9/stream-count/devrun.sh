#!/usr/bin/env bash
# Lever table row 63: stream_bench.cu built and run on the GPU host.
set -u
here=docs/perf-runs/2026-12-01/session9/stream-count
mkdir -p "$OUT/run"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$OUT/run/gpu.txt" 2>&1
date -u >"$OUT/run/date.txt"
nvcc -O3 -arch=sm_90a -o "$OUT/stream_bench" "$here/stream_bench.cu" || exit 1
"$OUT/stream_bench" | tee "$OUT/run/streams.tsv"
rm -f "$OUT/stream_bench"
