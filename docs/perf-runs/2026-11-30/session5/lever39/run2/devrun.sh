#!/usr/bin/env bash
# Lever table row 40: row 39 for down only (kPassesBeforeStaging = 2 for both kernels), bundle/bin,
# against the kernels before it (bundle/base36/bin), deploy/gpu-ab.sh.
set -u
deploy/gpu-ab.sh bundle bundle/base36/bin "$OUT/run"
head -75 "$OUT/run/summary.txt"
rm -f "$OUT/run/profile/sass.txt"
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
