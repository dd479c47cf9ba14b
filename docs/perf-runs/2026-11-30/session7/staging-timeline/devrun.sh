#!/usr/bin/env bash
# Lever table row 51 (a measurement): where the staging of the inputs spends its time, with
# staging-timeline.patch (row 45's timeline plus four staging events; bundle/bin, built with
# GPUPROBE_WERROR=OFF: 12 bytes spilled in the union gate+up), the kept launch the tenth of ten
# back to back; two check launches each; then the instrumented and the plain kernels
# (bundle/base51/bin, commit d9a8c66) timed, gpu-bench.sh --quick each.
set -u
source deploy/await-daemon.sh
here=docs/perf-runs/2026-11-30/session7/staging-timeline
out=$OUT/run
mkdir -p "$out"
gunzip -f bundle/base51/bin/gpuprobed.gz  # carried compressed: the device tool's 64 MiB
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base51/bin/gpuprobe
ln -sfn "$PWD/bundle/lib" bundle/base51/lib
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
      python3 $here/timeline_staging.py "$dump/${arm}_${kernel}_out.npy" \
        >"$out/summary-$arm-$kernel-$round.txt" 2>&1
    done
  done
  rm -rf "$dump"
done
kill -TERM $daemon; wait $daemon
deploy/gpu-bench.sh bundle "$out/instr" --quick
deploy/gpu-bench.sh bundle/base51 "$out/plain" --quick
cat "$out"/summary-union_t6_u10-h-1.txt "$out"/summary-union_t6_u10-y-1.txt \
  "$out"/summary-per-slot_t6_u60-h-1.txt
for d in instr plain; do echo "== $d"; grep -v "^#" "$out/$d/targets.tsv" | cut -f1-8,12; done
find "$out" -type f -size +100k ! -name "*.gz" -exec gzip -9 {} \;
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
