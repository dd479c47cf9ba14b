#!/usr/bin/env bash
# Lever table row 46: the group data in the kernels' parameters, bundle/bin, against the build
# before it (bundle/base44/bin: commit a260ecf, row 44's timing), deploy/gpu-ab.sh.
set -u
gunzip -f bundle/base44/bin/gpuprobed.gz  # carried compressed: the device tool's 64 MiB
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base44/bin/gpuprobe
deploy/gpu-ab.sh bundle bundle/base44/bin "$OUT/run"
head -75 "$OUT/run/summary.txt"
rm -f "$OUT/run/profile/sass.txt"
find "$OUT/run" -type f -size +100k ! -name "*.gz" -exec gzip -9 {} \;
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
