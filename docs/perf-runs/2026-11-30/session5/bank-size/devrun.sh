#!/usr/bin/env bash
# Lever table row 31 (a measurement): the per-slot and floor arms at t = 6, union 60 with banks
# of 60, 128, 256 and 512 experts (the routing's 60 experts in 110.6 MB up to 943 MB), two
# rounds; then ncu (caches flushed, clocks left alone) of the per-slot launches at 60 and 512.
set -u
source deploy/await-daemon.sh
out=$OUT/run
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/bundle/lib PATH=$PWD/bundle/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
gpuprobed --listen 127.0.0.1:0 --backend cuda --http "" --data-dir "$(mktemp -d)" >"$out/daemon.log" 2>&1 &
daemon=$!
GPUPROBE_SERVER=$(await_gpuprobed "$out/daemon.log" $daemon) || exit 1
export GPUPROBE_SERVER
for round in 1 2; do
  for experts in 512 60 128 256; do
    gpuprobe --format tsv sweep --experts $experts --t-values 6 --unions 60 --variant per-slot,floor \
      --timing graph --cache warm --reps 20 --label run=bank-$experts-$round >"$out/bank-$experts-$round.tsv" 2>&1
  done
done
kill -TERM $daemon; wait $daemon
date -u >> "$out/date.txt"
for experts in 60 512; do
  ncu --clock-control none --target-processes all -k regex:SelNvfp4 -c 2 \
    --metrics gpu__time_duration.sum,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum \
    --csv --log-file "$out/ncu-$experts.csv" \
    gpuprobed --isolation none --backend cuda --listen 127.0.0.1:0 --http "" \
    --data-dir "$(mktemp -d)" >"$out/ncu-log-$experts.txt" 2>&1 &
  profiler=$!
  server=$(await_gpuprobed "$out/ncu-log-$experts.txt" $profiler) || exit 1
  gpuprobe --server "$server" --format tsv sweep --experts $experts --t-values 6 --unions 60 \
    --variant per-slot --reps 2 --timing events >"$out/ncu-sweep-$experts.tsv" 2>&1
  pkill -TERM -x gpuprobed
  wait $profiler
done
for f in "$out"/bank-*.tsv; do echo "== $f"; grep -v "^#" "$f" | cut -f1-8,12; done
for f in "$out"/ncu-*.csv; do echo "== $f"; grep -v "^==" "$f" | cut -d, -f5,13-16 | head -20; done
