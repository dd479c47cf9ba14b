#!/usr/bin/env bash
# Lever table row 151: the final confirmation of the committed kernels (bundle/, this commit's
# deploy/make-bundle.sh; the kernels' machine code is row 149's) on the H200, for the issue's
# closing figures: deploy/gpu-bench.sh in full (GPU tests, `check`, two targets.tsv sweeps,
# geometries.csv, sweeps.tsv), a second gpu-bench.sh --compare run of the same build, the ncu
# evidence of deploy/gpu-profile.sh, and ncu's DRAM throughput of the read floor's kernel at the
# per-slot union-60 bytes (launches: union 60 gate+up, down), to set beside the sel kernels'.
# (Its ncu caught the daemon's calibration reads instead, the first 4 ReadFloor launches of 14:
# floor-devrun.sh, the second call, skips them. The ncu commands, as they ran, moved into
# floor-ncu.sh after the call.)
# Libraries carried compressed (the 64 MiB carry) are unpacked first. Output: run.tar.gz in $OUT.
set -u
find bundle -name '*.gz' -exec gunzip -f {} +
chmod +x bundle/bin/* bundle/tests/cuda_backend_test
run=$OUT/run
mkdir -p "$run"
date -u +%FT%TZ >"$run/date.txt"
deploy/gpu-bench.sh bundle "$run/final"
deploy/gpu-bench.sh bundle "$run/second" --compare
deploy/gpu-profile.sh bundle "$run/profile" >"$run/profile-run.txt" 2>&1
echo "gpu-profile exit $?" >>"$run/profile-run.txt"

bash docs/perf-runs/2026-12-01/session15/final/floor-ncu.sh 0 "$run/floor-ncu"
date -u +%FT%TZ >>"$run/date.txt"
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$run"
