#!/usr/bin/env bash
# Lever table row 48: windows of groups in the per-slot kernels (bundle/bin, commit aded0c1)
# against the build before rows 47-48 (bundle/base48/bin: commit d9a8c66, row 40's kernels),
# deploy/gpu-ab.sh; then `w8` (down windows of 8 groups) with gpu-bench.sh --compare.
set -u
for v in base48 w8; do
  gunzip -f "bundle/$v/bin/gpuprobed.gz"  # carried compressed: the device tool's 64 MiB
  ln -sfn "$PWD/bundle/bin/gpuprobe" "bundle/$v/bin/gpuprobe"
  ln -sfn "$PWD/bundle/lib" "bundle/$v/lib"
done
deploy/gpu-ab.sh bundle bundle/base48/bin "$OUT/run"
deploy/gpu-bench.sh bundle/w8 "$OUT/run/w8" --compare
head -80 "$OUT/run/summary.txt"
tail -n 1 "$OUT/run/w8/check.txt"
grep -v '^#' "$OUT/run/w8/targets.tsv" | cut -f1-8,12
grep -E "^per-slot" "$OUT/run/w8/geometries.csv" | cut -d, -f1-7
rm -f "$OUT/run/profile/sass.txt"
find "$OUT/run" -type f -size +100k ! -name "*.gz" -exec gzip -9 {} \;
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
