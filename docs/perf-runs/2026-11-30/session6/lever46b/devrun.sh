#!/usr/bin/env bash
# Lever table row 46, second build: the group data last in the kernels' parameters, 128 words,
# bundle/bin, against the build before row 46 (bundle/base44/bin: commit a260ecf),
# deploy/gpu-ab.sh; then the 256-word build (bundle/w256/bin) with gpu-bench.sh --compare.
set -u
for v in base44 w256; do
  gunzip -f "bundle/$v/bin/gpuprobed.gz"  # carried compressed: the device tool's 64 MiB
  ln -sfn "$PWD/bundle/bin/gpuprobe" "bundle/$v/bin/gpuprobe"
  ln -sfn "$PWD/bundle/lib" "bundle/$v/lib"
done
deploy/gpu-ab.sh bundle bundle/base44/bin "$OUT/run"
deploy/gpu-bench.sh bundle/w256 "$OUT/run/w256" --compare
head -75 "$OUT/run/summary.txt"
grep -E "per-slot|union" "$OUT/run/w256/targets.tsv" | cut -f1-8,12 | head -8
grep -E "^per-slot" "$OUT/run/w256/geometries.csv" | cut -d, -f1-7 | head -24
rm -f "$OUT/run/profile/sass.txt"
find "$OUT/run" -type f -size +100k ! -name "*.gz" -exec gzip -9 {} \;
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
