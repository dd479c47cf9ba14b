#!/usr/bin/env bash
# Knock-out k8 (lever table row 28): the kernels after lever 20 (bundle/) against k8 (the per-slot
# pass without decode, B loads and mma), wrong results, timing only; rotating twice.
set -u
out=$OUT/run
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/bundle/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
for round in 1 2; do
  for v in base k8; do
    dir=bundle/$v; [[ $v == base ]] && dir=bundle
    deploy/gpu-bench.sh "$dir" "$out/$v-$round" --quick
  done
done
date -u >> "$out/date.txt"
for round in 1 2; do for v in base k8; do echo "== $v-$round $(tail -n 1 "$out/$v-$round/check.txt")"; grep -v "^#" "$out/$v-$round/targets.tsv" | cut -f1-8,12 | grep -v "^t" | head -4; done; done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
