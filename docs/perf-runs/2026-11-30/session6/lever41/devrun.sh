#!/usr/bin/env bash
# Lever table row 41: steal plans (kStealHops = 2), bundle/bin, against the kernels before it
# (bundle/base40/bin: commit 312aed0), deploy/gpu-ab.sh; then the kStealHops = 1 build
# (bundle/h1/bin) with gpu-bench.sh --quick. The client is the same in all three builds.
set -u
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base40/bin/gpuprobe
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/h1/bin/gpuprobe
deploy/gpu-ab.sh bundle bundle/base40/bin "$OUT/run"
h1=$(mktemp -d)
ln -s "$PWD/bundle/h1/bin" "$h1/bin"
ln -s "$PWD/bundle/lib" "$h1/lib"
deploy/gpu-bench.sh "$h1" "$OUT/run/h1" --quick
head -75 "$OUT/run/summary.txt"
grep -E "tests|PASSED|FAILED" "$OUT/run/final/tests.txt" | tail -4
grep -E "t=6|union" "$OUT/run/h1/targets.tsv" | head -20
rm -f "$OUT/run/profile/sass.txt"
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
