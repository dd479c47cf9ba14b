#!/usr/bin/env bash
# The sel kernels with multiply-high divisions (bundle/) against main's (bundle/base/), one run.
set -u
out=$OUT/run
mkdir -p "$out/new" "$out/base"
source deploy/await-daemon.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
deploy/gpu-bench.sh bundle "$out/new" --compare
LD_LIBRARY_PATH=$PWD/bundle/lib deploy/gpu-bench.sh bundle/base "$out/base" --compare
for v in new base; do
  bin=bundle/bin; [[ $v == base ]] && bin=bundle/base/bin
  data=$(mktemp -d)
  LD_LIBRARY_PATH=$PWD/bundle/lib ncu --clock-control none --target-processes all -k regex:SelNvfp4 -c 2 \
    --metrics smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum \
    $bin/gpuprobed --isolation none --backend cuda --listen 127.0.0.1:0 --http "" --data-dir "$data" > "$out/ncu-$v.txt" 2>&1 &
  pid=$!
  server=$(await_gpuprobed "$out/ncu-$v.txt" $pid) && \
    LD_LIBRARY_PATH=$PWD/bundle/lib $bin/gpuprobe --server "$server" --format tsv sweep --t-values 6 --unions 60 --variant per-slot --reps 2 --timing events > "$out/ncu-sweep-$v.tsv" 2>&1
  sleep 1; pkill -TERM -x gpuprobed; wait $pid
done
tail -3 "$out/new/tests.txt"; tail -2 "$out/new/check.txt"
for v in new base; do echo "== $v"; grep -v "^#" "$out/$v/targets.tsv" | cut -f1-8 | head -14; grep -E "^per-slot,(1|3),|^per-slot,6,60,60|^per-slot,8,80,80|^per-slot,4," "$out/$v/geometries.csv" | cut -d, -f1-9; grep -E "SelNvfp4Kernel<|inst_executed|dram__|duration" "$out/ncu-$v.txt"; done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
