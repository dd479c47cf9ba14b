#!/usr/bin/env bash
# Lever table row 36: gate+up's L2 prefetch of 4 passes beyond the ring (bundle/bin) against the
# kernels before it (bundle/base36/bin), deploy/gpu-ab.sh; then a depth of 8 (bundle/a8/bin,
# gpuprobed only) and the base again, --quick, for the depth.
set -u
out=$OUT/run
mkdir -p "$out"
deploy/gpu-ab.sh bundle bundle/base36/bin "$out/ab"
cp bundle/bin/gpuprobe bundle/a8/bin/
export LD_LIBRARY_PATH=$PWD/bundle/lib
for v in a8 base36; do
  mkdir -p "$out/quick/$v"; ln -sfn "$PWD/bundle/lib" bundle/$v/lib
  deploy/gpu-bench.sh bundle/$v "$out/quick/$v" --quick
done
for v in a8 base36; do echo "== $v $(tail -n 1 "$out/quick/$v/check.txt")"; grep -v "^#" "$out/quick/$v/targets.tsv" | cut -f1-8,12 | grep -v "^t"; done
cat "$out/ab/summary.txt" | head -60
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
