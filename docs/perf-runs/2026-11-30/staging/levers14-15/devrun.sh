#!/usr/bin/env bash
# Levers 14 and 15 against the kernels after lever 13 (bundle/base/), one run, rotating:
#   bundle/u3: lever 14 (group data requested first; a block that stages every input row copies
#              them while the group data is in flight)
#   bundle/:   lever 14 + 15 (a lane's scale words together in the ring, one vector read)
set -u
out=$OUT/run
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/bundle/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
deploy/gpu-bench.sh bundle "$out/l15" --compare
deploy/gpu-bench.sh bundle/base "$out/base" --compare
deploy/gpu-bench.sh bundle/u3 "$out/l14" --compare
deploy/gpu-bench.sh bundle "$out/l15-2" --quick
deploy/gpu-bench.sh bundle/base "$out/base-2" --quick
deploy/gpu-bench.sh bundle/u3 "$out/l14-2" --quick
tail -3 "$out/l15/tests.txt"; for v in l15 base l14; do tail -1 "$out/$v/check.txt"; done
for v in l15 base l14 l15-2 base-2 l14-2; do echo "== $v"; grep -v "^#" "$out/$v/targets.tsv" | cut -f1-8,12 | grep -v "^t" | head -6; done
for v in l15 base l14; do echo "== $v"; grep -E "^per-slot,(1|3),|^per-slot,6,60,60|^per-slot,8,80,80|^per-slot,4," "$out/$v/geometries.csv" | cut -d, -f1-9; done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
