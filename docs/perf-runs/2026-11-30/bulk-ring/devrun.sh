#!/usr/bin/env bash
# One device call: the bulk-ring kernels (bundle/) against main's (bundle/base/), same session.
set -u
out=$OUT/run
mkdir -p "$out/new" "$out/base"
source deploy/await-daemon.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
deploy/gpu-bench.sh bundle "$out/new" --quick
LD_LIBRARY_PATH=$PWD/bundle/lib deploy/gpu-bench.sh bundle/base "$out/base" --quick
# ncu: one launch of each per-slot kernel at t = 6, union 60, new and base kernels
for v in new base; do
  bin=bundle/bin; [[ $v == base ]] && bin=bundle/base/bin
  data=$(mktemp -d)
  LD_LIBRARY_PATH=$PWD/bundle/lib ncu --clock-control none --target-processes all -k regex:SelNvfp4 -c 2 \
    --metrics smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio \
    $bin/gpuprobed --isolation none --backend cuda --listen 127.0.0.1:0 --http "" --data-dir "$data" > "$out/ncu-$v.txt" 2>&1 &
  pid=$!
  server=$(await_gpuprobed "$out/ncu-$v.txt" $pid) && \
    LD_LIBRARY_PATH=$PWD/bundle/lib $bin/gpuprobe --server "$server" --format tsv sweep --t-values 6 --unions 60 --variant per-slot --reps 2 --timing events > "$out/ncu-sweep-$v.tsv" 2>&1
  sleep 1; pkill -TERM -x gpuprobed; wait $pid
done
cuobjdump -res-usage bundle/bin/gpuprobed 2>&1 | grep -A1 SelNvfp4 > "$out/res-usage.txt"
cuobjdump -sass bundle/bin/gpuprobed > "$out/sass-new.txt" 2>&1
cuobjdump -sass bundle/base/bin/gpuprobed > "$out/sass-base.txt" 2>&1
tail -4 "$out/new/tests.txt"; tail -2 "$out/new/check.txt"
for v in new base; do echo "== $v"; grep -v "^#" "$out/$v/targets.tsv" | cut -f1-9 | head -40; done
for v in new base; do echo "== ncu $v"; grep -E "SelNvfp4Kernel<|inst_executed|dram__|duration|stalled" "$out/ncu-$v.txt" | sed 's/smsp__average_warps_issue_stalled_//' | head -30; done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
