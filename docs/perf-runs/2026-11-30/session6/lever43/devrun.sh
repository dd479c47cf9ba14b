#!/usr/bin/env bash
# Lever table row 43: team plans, claims requested kStages + 1 passes ahead (kMaxTeamBlocks = 4),
# bundle/bin, against the kernels before row 41 (bundle/base40/bin: commit 312aed0),
# deploy/gpu-ab.sh; then the kMaxTeamBlocks = 8 build
# (bundle/t8/bin) with gpu-bench.sh --compare. The client is the same in all three builds.
set -u
for v in base40 t8; do
  gunzip -f "bundle/$v/bin/gpuprobed.gz"  # carried compressed: the device tool's 64 MiB
  ln -sfn "$PWD/bundle/bin/gpuprobe" "bundle/$v/bin/gpuprobe"
  ln -sfn "$PWD/bundle/lib" "bundle/$v/lib"
done
deploy/gpu-ab.sh bundle bundle/base40/bin "$OUT/run"
deploy/gpu-bench.sh bundle/t8 "$OUT/run/t8" --compare
head -75 "$OUT/run/summary.txt"
grep -E "per-slot|union" "$OUT/run/t8/targets.tsv" | cut -f1-10 | head -12
grep -E "^per-slot" "$OUT/run/t8/geometries.csv" | cut -d, -f1-7 | head -22
rm -f "$OUT/run/profile/sass.txt"
find "$OUT/run" -type f -size +100k ! -name "*.gz" -exec gzip -9 {} \;
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
