#!/usr/bin/env bash
# Lever table row 79: deploy/gpu-bench.sh (GPU tests, `check`, targets twice, geometries, the
# default sweeps in every timing and cache mode) of the build whose kernel and SmemBytes take their
# shared-memory layout from one function (CarveSmem): a refactor whose machine code differs.
set -u
gunzip -f bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz  # carried compressed
deploy/gpu-bench.sh bundle "$OUT/run"
tail -n 3 "$OUT/run/tests.txt"
tail -n 1 "$OUT/run/check.txt"
grep "read bw" "$OUT/run/info.txt"
grep -v '^#' "$OUT/run/targets.tsv" | cut -f1-8,12
grep -E '^per-slot,' "$OUT/run/geometries.csv" | cut -d, -f1-6,20,21
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
