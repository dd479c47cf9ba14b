#!/usr/bin/env bash
# Knock-outs (lever table row 22): the kernels after lever 20 (bundle/) against three builds that
# each remove one part of the per-pass work, wrong results, timing only: k1 BREV replaced by an
# ALU rotate, k2 the per-slot B loads replaced by registers, k4 no decode. Rotating twice.
set -u
out=$OUT/run
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/bundle/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
mv bundle/tests bundle/tests-off   # no GPU tests here: the knock-outs fail them by design
for round in 1 2; do
  for v in base k1 k2 k4; do
    dir=bundle/$v; [[ $v == base ]] && dir=bundle
    deploy/gpu-bench.sh "$dir" "$out/$v-$round" --quick
  done
done
date -u >> "$out/date.txt"
for round in 1 2; do for v in base k1 k2 k4; do echo "== $v-$round"; grep -v "^#" "$out/$v-$round/targets.tsv" | cut -f1-8,12 | grep -v "^t" | head -4; done; done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
