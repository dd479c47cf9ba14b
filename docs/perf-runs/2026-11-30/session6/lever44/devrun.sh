#!/usr/bin/env bash
# Lever table row 44: warm graph samples timed by event records inside the graph, bundle/bin,
# against the build before it (bundle/base40/bin: commit 312aed0, the same kernels, events
# recorded on the stream around cudaGraphLaunch), deploy/gpu-ab.sh.
set -u
gunzip -f bundle/base40/bin/gpuprobed.gz  # carried compressed: the device tool's 64 MiB
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base40/bin/gpuprobe
deploy/gpu-ab.sh bundle bundle/base40/bin "$OUT/run"
head -75 "$OUT/run/summary.txt"
rm -f "$OUT/run/profile/sass.txt"
find "$OUT/run" -type f -size +100k ! -name "*.gz" -exec gzip -9 {} \;
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
