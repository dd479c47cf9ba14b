#!/usr/bin/env bash
# Lever table row 54: cluster K halves (bundle/bin, commit of row 54's prediction, with row 53's
# token windows) against the kernels before rows 53-54 (bundle/base54/bin: commit d9a8c66):
# deploy/gpu-ab.sh, then halves-bench.sh alternating new, base, new, base, then ncu of the union
# variant's union-10 gate+up.
set -u
here=docs/perf-runs/2026-11-30/session8/lever54
# carried compressed: the device tool's 64 MiB
gunzip -f bundle/base54/bin/gpuprobed.gz bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base54/bin/gpuprobe
ln -sfn "$PWD/bundle/lib" bundle/base54/lib
deploy/gpu-ab.sh bundle bundle/base54/bin "$OUT/run"
for round in new base new2 base2; do
  b=bundle; [[ $round == base* ]] && b=bundle/base54
  "$here/halves-bench.sh" "$b" "$OUT/run/halves-$round"
done
head -80 "$OUT/run/summary.txt"
for round in new base new2 base2; do
  echo "== $round"; grep -E "^union," "$OUT/run/halves-$round/halves.csv" | cut -d, -f1-9
done
grep -E "SelNvfp4|Duration|Registers Per|DRAM Throughput|Executed Ipc A|Cluster" \
  "$OUT/run/profile/ncu-details.txt" | head -80
rm -f "$OUT/run/profile/sass.txt"
find "$OUT/run" -type f -size +100k ! -name "*.gz" -exec gzip -9 {} \;
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
