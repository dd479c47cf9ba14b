#!/usr/bin/env bash
# Lever table row 61: cluster K thirds (bundle/bin) against commit d6da6e0's build
# (bundle/base61/bin): the new build's GPU tests, `check` and targets (gpu-bench.sh --quick), the
# base's targets, then row 60's ring-bench.sh (the union variant at small unions) new, base, new,
# base, and launches.sh (each launch's deal, by ncu) for both builds.
set -u
here=docs/perf-runs/2026-12-01/session9/lever61
bench=docs/perf-runs/2026-12-01/session9/lever60/ring-bench.sh
# carried compressed: the device tool's 64 MiB
gunzip -f bundle/base61/bin/gpuprobed.gz bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz
chmod +x bundle/base61/bin/gpuprobed  # its .gz was written by a redirect: no mode to restore
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base61/bin/gpuprobe
ln -sfn "$PWD/bundle/lib" bundle/base61/lib
export LD_LIBRARY_PATH=$PWD/bundle/lib
deploy/gpu-bench.sh bundle "$OUT/run/quick" --quick
deploy/gpu-bench.sh bundle/base61 "$OUT/run/base-quick" --quick
for round in new base new2 base2; do
  b=bundle; [[ $round == base* ]] && b=bundle/base61
  "$bench" "$b" "$OUT/run/ring-$round"
done
for b in new base; do
  d=bundle; [[ $b == base ]] && d=bundle/base61
  "$here/launches.sh" "$d" "$OUT/run/launches-$b" >"$OUT/run/launches-$b.txt" 2>&1
  echo "== launches $b"; tail -n 4 "$OUT/run/launches-$b.txt"
done
tail -n 3 "$OUT/run/quick/tests.txt"
grep -E "FAIL|Failure" "$OUT/run/quick/tests.txt" | head -20
tail -n 1 "$OUT/run/quick/check.txt" "$OUT/run/base-quick/check.txt"
for r in quick base-quick; do echo "== $r"; grep -v '^#' "$OUT/run/$r/targets.tsv" | cut -f1-8,12; done
for round in new base new2 base2; do
  echo "== $round"; grep -E "^union," "$OUT/run/ring-$round/ring.csv" | cut -d, -f1-9
done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
