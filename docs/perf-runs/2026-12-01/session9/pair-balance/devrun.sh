#!/usr/bin/env bash
# Lever table row 62: pair_bench.cu built and run on the GPU host.
set -u
here=docs/perf-runs/2026-12-01/session9/pair-balance
mkdir -p "$OUT/run"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$OUT/run/gpu.txt" 2>&1
date -u >"$OUT/run/date.txt"
nvcc -O3 -arch=sm_90a -o "$OUT/pair_bench" "$here/pair_bench.cu" || exit 1
"$OUT/pair_bench" | tee "$OUT/run/pair.tsv"
rm -f "$OUT/pair_bench"
