#!/usr/bin/env bash
# Lever table row 56: cluster K halves where the consecutive split plan does not fit (bundle/bin)
# against the final build of row 55 (bundle/base56/bin): the GPU tests, `check` and targets of
# the new build (gpu-bench.sh --quick), then cliff-bench.sh alternating new, base, new, base.
set -u
here=docs/perf-runs/2026-11-30/session8/lever56
# carried compressed: the device tool's 64 MiB
gunzip -f bundle/base56/bin/gpuprobed.gz bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz
chmod +x bundle/base56/bin/gpuprobed  # its .gz was written by a redirect: no mode to restore
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base56/bin/gpuprobe
ln -sfn "$PWD/bundle/lib" bundle/base56/lib
export LD_LIBRARY_PATH=$PWD/bundle/lib
deploy/gpu-bench.sh bundle "$OUT/run/quick" --quick
for round in new base new2 base2; do
  b=bundle; [[ $round == base* ]] && b=bundle/base56
  "$here/cliff-bench.sh" "$b" "$OUT/run/cliff-$round"
done
tail -n 3 "$OUT/run/quick/tests.txt"
tail -n 1 "$OUT/run/quick/check.txt"
grep -v '^#' "$OUT/run/quick/targets.tsv" | cut -f1-8,12
for round in new base new2 base2; do
  echo "== $round"; grep -E "^union," "$OUT/run/cliff-$round/cliff.csv" | cut -d, -f1-9
done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
