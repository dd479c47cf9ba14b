#!/usr/bin/env bash
# The tenth session's closing measurement: deploy/gpu-bench.sh (GPU tests, `check`, targets twice,
# geometries, the default sweeps in every timing and cache mode) of the session's final commit,
# whose kernels are row 67's (commit 76e47ed's moe_sel_kernels.cu: the rings on a 128-byte line).
set -u
gunzip -f bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz  # carried compressed
deploy/gpu-bench.sh bundle "$OUT/run"
tail -n 3 "$OUT/run/tests.txt"
tail -n 1 "$OUT/run/check.txt"
grep "read bw" "$OUT/run/info.txt"
grep -v '^#' "$OUT/run/targets.tsv" | cut -f1-8,12
grep -E '^per-slot,' "$OUT/run/geometries.csv" | cut -d, -f1-6,20,21
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
