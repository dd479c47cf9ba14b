#!/usr/bin/env bash
# Lever table row 47: the inputs multicast to clusters of 2 (bundle/bin, commit dcb77c8) against
# the build before it (bundle/base47/bin: commit d9a8c66, row 40's kernels), deploy/gpu-ab.sh.
set -u
v=base47
gunzip -f "bundle/$v/bin/gpuprobed.gz"  # carried compressed: the device tool's 64 MiB
ln -sfn "$PWD/bundle/bin/gpuprobe" "bundle/$v/bin/gpuprobe"
ln -sfn "$PWD/bundle/lib" "bundle/$v/lib"
deploy/gpu-ab.sh bundle bundle/base47/bin "$OUT/run"
head -80 "$OUT/run/summary.txt"
grep -E "^union" "$OUT/run/final/geometries.csv" "$OUT/run/base/geometries.csv" | cut -d, -f1-7 | head -40
rm -f "$OUT/run/profile/sass.txt"
find "$OUT/run" -type f -size +100k ! -name "*.gz" -exec gzip -9 {} \;
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
