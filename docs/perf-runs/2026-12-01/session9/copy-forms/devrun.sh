#!/usr/bin/env bash
# Lever table row 64: copy_forms_bench.cu built and run on the GPU host.
set -u
here=docs/perf-runs/2026-12-01/session9/copy-forms
mkdir -p "$OUT/run"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$OUT/run/gpu.txt" 2>&1
date -u >"$OUT/run/date.txt"
nvcc -O3 -arch=sm_90a -o "$OUT/copy_forms_bench" "$here/copy_forms_bench.cu" || exit 1
"$OUT/copy_forms_bench" | tee "$OUT/run/copy-forms.tsv"
rm -f "$OUT/copy_forms_bench"
