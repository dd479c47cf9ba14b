#!/usr/bin/env bash
# Lever table row 39: fewer passes requested before the staging (gate+up 1 of 2, down 2 of 5; the
# rest right after it), bundle/bin, against the kernels before it (bundle/base36/bin),
# deploy/gpu-ab.sh; then down with 1 of 5 (bundle/d1, gpuprobed only) and the base, --quick.
set -u
out=$OUT/run
mkdir -p "$out"
deploy/gpu-ab.sh bundle bundle/base36/bin "$out/ab"
cp bundle/bin/gpuprobe bundle/d1/bin/
export LD_LIBRARY_PATH=$PWD/bundle/lib
for v in d1 base36; do
  mkdir -p "$out/quick/$v"; ln -sfn "$PWD/bundle/lib" bundle/$v/lib
  deploy/gpu-bench.sh bundle/$v "$out/quick/$v" --quick
done
for v in d1 base36; do echo "== $v $(tail -n 1 "$out/quick/$v/check.txt")"; grep -v "^#" "$out/quick/$v/targets.tsv" | cut -f1-8,12 | grep -v "^t"; done
head -75 "$out/ab/summary.txt"
rm -f "$out/ab/profile/sass.txt"
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
