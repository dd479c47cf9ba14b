#!/usr/bin/env bash
# Lever table row 57: levels-bench.sh from three daemon starts of the final build (bundle/bin).
set -u
here=docs/perf-runs/2026-11-30/session8/levels
gunzip -f bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz
for start in 1 2 3; do
  "$here/levels-bench.sh" bundle "$OUT/run/start-$start"
done
for start in 1 2 3; do
  for sweep in 1 2 3; do
    echo "start $start sweep $sweep: $(grep '^per-slot,' "$OUT/run/start-$start/sweep-$sweep.csv" \
      | cut -d, -f2,4,5,6 | tr '\n' ' ')"
  done
done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
