#!/usr/bin/env bash
# Two blocks per SM (GPUPROBE_SEL_BLOCKS_PER_SM=2, experiment build) against main's kernels.
set -u
out=$OUT/run
mkdir -p "$out/new" "$out/base"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
GPUPROBE_SEL_BLOCKS_PER_SM=2 deploy/gpu-bench.sh bundle "$out/new" --compare
LD_LIBRARY_PATH=$PWD/bundle/lib deploy/gpu-bench.sh bundle/base "$out/base" --compare
tail -3 "$out/new/tests.txt"; tail -2 "$out/new/check.txt"
for v in new base; do echo "== $v"; grep -v "^#" "$out/$v/targets.tsv" | cut -f1-8 | head -7; grep -v "^#" "$out/$v/geometries.csv" | cut -d, -f1-12 | head -40; done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
