#!/usr/bin/env bash
# Lever table row 50: the 176-byte parameter block (bundle/bin, commit of row 50's prediction)
# against the build before rows 47-50 (bundle/base50/bin: commit d9a8c66), deploy/gpu-ab.sh;
# then `pad40` (the base with 40 unused parameter bytes) with gpu-bench.sh --compare.
set -u
for v in base50 pad40; do
  gunzip -f "bundle/$v/bin/gpuprobed.gz"  # carried compressed: the device tool's 64 MiB
  ln -sfn "$PWD/bundle/bin/gpuprobe" "bundle/$v/bin/gpuprobe"
  ln -sfn "$PWD/bundle/lib" "bundle/$v/lib"
done
deploy/gpu-ab.sh bundle bundle/base50/bin "$OUT/run"
deploy/gpu-bench.sh bundle/pad40 "$OUT/run/pad40" --compare
head -80 "$OUT/run/summary.txt"
tail -n 1 "$OUT/run/pad40/check.txt"
grep -v '^#' "$OUT/run/pad40/targets.tsv" | cut -f1-8,12
grep -E "^per-slot" "$OUT/run/pad40/geometries.csv" | cut -d, -f1-7
rm -f "$OUT/run/profile/sass.txt"
find "$OUT/run" -type f -size +100k ! -name "*.gz" -exec gzip -9 {} \;
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
