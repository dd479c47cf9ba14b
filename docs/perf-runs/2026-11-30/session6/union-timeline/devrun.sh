#!/usr/bin/env bash
# Lever table row 45 (a measurement): timelines of the union variant's launches at t = 6, union 10
# (and, beside them, union 60 and the per-slot kernels) with union-timeline.patch (bundle/bin,
# built with GPUPROBE_WERROR=OFF: one 4-byte spill in the union gate+up), the kept launch the
# tenth of ten back to back; two check launches each; then the instrumented and the plain
# kernels (bundle/base40/bin, commit 312aed0) timed, gpu-bench.sh --quick each, twice.
set -u
source deploy/await-daemon.sh
here=docs/perf-runs/2026-11-30/session6/union-timeline
out=$OUT/run
mkdir -p "$out"
gunzip -f bundle/base40/bin/gpuprobed.gz  # carried compressed: the device tool's 64 MiB
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base40/bin/gpuprobe
ln -sfn "$PWD/bundle/lib" bundle/base40/lib
export LD_LIBRARY_PATH=$PWD/bundle/lib
bundle/bin/gpuprobed --listen 127.0.0.1:0 --backend cuda --http "" --data-dir "$(mktemp -d)" \
  >"$out/daemon.log" 2>&1 &
daemon=$!
GPUPROBE_SERVER=$(await_gpuprobed "$out/daemon.log" $daemon) || exit 1
export GPUPROBE_SERVER
for round in 1 2; do
  dump=$(mktemp -d)
  bundle/bin/gpuprobe check --t 6 --unions 10,60 --variant union,per-slot --dump "$dump" \
    >"$out/check-$round.txt" 2>&1
  for arm in union_t6_u10 union_t6_u60 per-slot_t6_u10 per-slot_t6_u60; do
    for kernel in h y; do
      python3 $here/timeline_union.py "$dump/${arm}_${kernel}_out.npy" \
        >"$out/summary-$arm-$kernel-$round.txt" 2>&1
    done
  done
  ls "$dump" >"$out/dump-files-$round.txt"
  rm -rf "$dump"
done
kill -TERM $daemon; wait $daemon
for round in 1 2; do
  deploy/gpu-bench.sh bundle "$out/instr-$round" --quick
  deploy/gpu-bench.sh bundle/base40 "$out/plain-$round" --quick
done
cat "$out"/summary-union_t6_u10-*.txt
for d in instr-1 plain-1 instr-2 plain-2; do echo "== $d"; grep -v "^#" "$out/$d/targets.tsv" | cut -f1-8,12; done
find "$out" -type f -size +100k ! -name "*.gz" -exec gzip -9 {} \;
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
