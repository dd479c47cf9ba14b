#!/usr/bin/env bash
# Why lever 16 slowed the per-slot down kernel: SASS-level executions (ncu source page) of the
# per-slot down launch at t = 6, union 60, and the down kernel's SASS, for lever 16 (bundle/)
# and lever 14 (bundle/base/).
set -u
out=$OUT/run
mkdir -p "$out"
source deploy/await-daemon.sh
export LD_LIBRARY_PATH=$PWD/bundle/lib
date -u > "$out/date.txt"
for v in new base; do
  bin=bundle/bin; [[ $v == base ]] && bin=bundle/base/bin
  cuobjdump -sass -fun '_ZN8gpuprobe' $bin/gpuprobed > "$out/sass-$v.txt" 2>&1 || cuobjdump -sass $bin/gpuprobed > "$out/sass-$v.txt" 2>&1
  ncu --clock-control none --target-processes all -k regex:SelNvfp4 --launch-skip 2 -c 2 --section SourceCounters \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum -o "$out/prof-$v" \
    $bin/gpuprobed --isolation none --backend cuda --listen 127.0.0.1:0 --http "" --data-dir "$(mktemp -d)" > "$out/ncu-log-$v.txt" 2>&1 &
  pid=$!
  server=$(await_gpuprobed "$out/ncu-log-$v.txt" $pid) && \
    $bin/gpuprobe --server "$server" --format tsv sweep --t-values 6 --unions 10,60 --variant per-slot --reps 2 --timing events > "$out/sweep-$v.tsv" 2>&1
  sleep 1; pkill -TERM -x gpuprobed; wait $pid
  ncu -i "$out/prof-$v.ncu-rep" --page source --csv --print-source sass --launch-skip 1 --launch-count 1 > "$out/source-down-$v.csv" 2>&1
  ncu -i "$out/prof-$v.ncu-rep" --page raw --csv --metrics gpu__time_duration.sum,smsp__inst_executed.sum > "$out/raw-$v.csv" 2>&1
  rm -f "$out/prof-$v.ncu-rep"
  echo "== $v"; cat "$out/raw-$v.csv" | cut -c1-300 | tail -2
  deploy/sass-loop-counts.py "$out/source-down-$v.csv" 64 "down $v"
done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
