#!/usr/bin/env bash
# Lever table row 59: bank-bench.sh from two daemon starts of commit d6da6e0's build (bundle/).
set -u
here=docs/perf-runs/2026-12-01/session9/bank-spread
gunzip -f bundle/lib/libgrpc.so.29.gz  # carried compressed: the device tool's 64 MiB
for start in 1 2; do
  "$here/bank-bench.sh" bundle "$OUT/run/start-$start"
done
for f in "$OUT"/run/start-*/experts-*.csv; do
  echo "== $f"; grep -E '^(per-slot|floor),' "$f" | cut -d, -f1,2,4,5,6,8,9,20,21
done
head -3 "$OUT/run/start-1/experts-512-1.csv"
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
