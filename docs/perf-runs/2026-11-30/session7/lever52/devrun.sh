#!/usr/bin/env bash
# Lever table row 52: the staging's units read once, into registers (bundle/bin,
# commit of row 52's prediction) against the build before rows 47-52 (bundle/base52/bin: commit d9a8c66, row
# 40's kernels), deploy/gpu-ab.sh.
set -u
v=base52
gunzip -f "bundle/$v/bin/gpuprobed.gz"  # carried compressed: the device tool's 64 MiB
ln -sfn "$PWD/bundle/bin/gpuprobe" "bundle/$v/bin/gpuprobe"
ln -sfn "$PWD/bundle/lib" "bundle/$v/lib"
deploy/gpu-ab.sh bundle bundle/base52/bin "$OUT/run"
head -80 "$OUT/run/summary.txt"
rm -f "$OUT/run/profile/sass.txt"
find "$OUT/run" -type f -size +100k ! -name "*.gz" -exec gzip -9 {} \;
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
