#!/usr/bin/env bash
# Lever 16 (staging loops walk whole rows per warp) in bundle/ against the kernels after lever 14
# (bundle/base/), one run, alternating new, base, new, base.
set -u
out=$OUT/run
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/bundle/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
deploy/gpu-bench.sh bundle "$out/new" --compare
deploy/gpu-bench.sh bundle/base "$out/base" --compare
deploy/gpu-bench.sh bundle "$out/new2" --compare
deploy/gpu-bench.sh bundle/base "$out/base2" --compare
tail -3 "$out/new/tests.txt"; for v in new base new2 base2; do tail -1 "$out/$v/check.txt"; done
for v in new base new2 base2; do echo "== $v"; grep -v "^#" "$out/$v/targets.tsv" | cut -f1-8,12 | grep -v "^t" | head -6; done
for v in new base new2 base2; do echo "== $v"; grep -E "^per-slot,(1|3),|^per-slot,6,60,60|^per-slot,8,80,80|^per-slot,4," "$out/$v/geometries.csv" | cut -d, -f1-9; done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
