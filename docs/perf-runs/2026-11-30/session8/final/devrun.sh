#!/usr/bin/env bash
# Lever table row 55 and the final figures: the final build (bundle/bin: rows 53 and 54) against
# d9a8c66's (bundle/base55/bin): deploy/gpu-ab.sh, halves-bench.sh for each, then the per-slot
# geometries from six daemon starts alternating new and base (starts-bench.sh).
set -u
here=docs/perf-runs/2026-11-30/session8
# carried compressed: the device tool's 64 MiB
gunzip -f bundle/base55/bin/gpuprobed.gz bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base55/bin/gpuprobe
ln -sfn "$PWD/bundle/lib" bundle/base55/lib
deploy/gpu-ab.sh bundle bundle/base55/bin "$OUT/run"
"$here/lever54/halves-bench.sh" bundle "$OUT/run/halves-new"
"$here/lever54/halves-bench.sh" bundle/base55 "$OUT/run/halves-base"
for start in new1 base1 new2 base2 new3 base3; do
  b=bundle; [[ $start == base* ]] && b=bundle/base55
  "$here/final/starts-bench.sh" "$b" "$OUT/run/starts-$start"
done
head -80 "$OUT/run/summary.txt"
for r in new base; do
  echo "== halves $r"; grep -E "^union," "$OUT/run/halves-$r/halves.csv" | cut -d, -f1-9
done
for start in new1 base1 new2 base2 new3 base3; do
  echo "== starts $start"; grep -E "^per-slot," "$OUT/run/starts-$start/starts.csv" | cut -d, -f2,4,5,6 | tr '\n' ' '; echo
done
grep -E "SelNvfp4|Duration|Registers Per|DRAM Throughput" "$OUT/run/profile/ncu-details.txt" | head -40
cat "$OUT/run/profile/sass-loop-counts.txt"
rm -f "$OUT/run/profile/sass.txt"
find "$OUT/run" -type f -size +100k ! -name "*.gz" -exec gzip -9 {} \;
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
