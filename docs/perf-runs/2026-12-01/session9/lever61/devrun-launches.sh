#!/usr/bin/env bash
# Lever table row 61b, second call: launches.sh (each union-variant gate+up launch's grid and
# cluster size, by ncu; its regex now matched against mangled names) for the new build
# (bundle/bin) and the base (bundle/base61/bin). The first call's launches.sh profiled nothing.
set -u
here=docs/perf-runs/2026-12-01/session9/lever61
gunzip -f bundle/base61/bin/gpuprobed.gz bundle/lib/libgrpc.so.29.gz
chmod +x bundle/base61/bin/gpuprobed
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base61/bin/gpuprobe
ln -sfn "$PWD/bundle/lib" bundle/base61/lib
mkdir -p "$OUT/run"
for b in new base; do
  d=bundle; [[ $b == base ]] && d=bundle/base61
  "$here/launches.sh" "$d" "$OUT/run/launches-$b" >"$OUT/run/launches-$b.txt" 2>&1
  echo "== launches $b"; tail -n 9 "$OUT/run/launches-$b.txt"
done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
