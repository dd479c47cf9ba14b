#!/usr/bin/env bash
# Lever 21 (next item in the same group: cursors moved on, not rebuilt; fast divisor without
# a branch) in bundle/ against lever 20 (bundle/base/), alternating twice, with the full benchmark
# and the profile of the new kernels (kept if they win: then these are the final figures).
set -u
out=$OUT/run
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/bundle/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
deploy/gpu-bench.sh bundle "$out/final"
deploy/gpu-bench.sh bundle/base "$out/base" --compare
deploy/gpu-bench.sh bundle "$out/new2" --compare
deploy/gpu-bench.sh bundle/base "$out/base2" --compare
deploy/gpu-profile.sh bundle "$out/profile" > "$out/profile-run.txt" 2>&1
echo "gpu-profile exit $?" >> "$out/profile-run.txt"
date -u >> "$out/date.txt"
tail -3 "$out/final/tests.txt"; for v in final base new2 base2; do tail -1 "$out/$v/check.txt"; done
for v in final base new2 base2; do echo "== $v"; grep -v "^#" "$out/$v/targets.tsv" | cut -f1-8,12 | grep -v "^t" | head -6; done
for v in final base new2 base2; do echo "== $v"; grep -E "^per-slot,(1|3),|^per-slot,6,60,60|^per-slot,8,80,80|^per-slot,4," "$out/$v/geometries.csv" | cut -d, -f1-9; done
tail -4 "$out/profile-run.txt"
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
