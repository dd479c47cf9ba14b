#!/usr/bin/env bash
# Lever table row 78, the tenth session's closing measurement: deploy/gpu-bench.sh (GPU tests,
# `check`, targets twice, geometries, the default sweeps in every timing and cache mode) of the
# session's final kernels (their ncu evidence: row 77's and, for the per-slot down, row 74's).
set -u
gunzip -f bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz  # carried compressed
deploy/gpu-bench.sh bundle "$OUT/run"
tail -n 3 "$OUT/run/tests.txt"
tail -n 1 "$OUT/run/check.txt"
grep "read bw" "$OUT/run/info.txt"
grep -v '^#' "$OUT/run/targets.tsv" | cut -f1-8,12
grep -E '^per-slot,' "$OUT/run/geometries.csv" | cut -d, -f1-6,20,21
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
