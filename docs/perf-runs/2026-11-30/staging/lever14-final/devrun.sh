#!/usr/bin/env bash
# Lever 14's kernels (third session of 2026-11-30): the full benchmark
# (deploy/gpu-bench.sh), a study of the graph-mode spread (arms alone, shuffled, more reps), ncu
# evidence (full set and SASS-level samples of the per-slot kernels at union 60) and the SASS.
set -u
out=$OUT/run
mkdir -p "$out/spread"
source deploy/await-daemon.sh
export LD_LIBRARY_PATH=$PWD/bundle/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
deploy/gpu-bench.sh bundle "$out/final"
date -u >> "$out/date.txt"

bundle/bin/gpuprobed --listen 127.0.0.1:0 --backend cuda --http "" --data-dir "$(mktemp -d)" > "$out/spread/daemon.log" 2>&1 &
daemon=$!
server=$(await_gpuprobed "$out/spread/daemon.log" $daemon)
sweep() { bundle/bin/gpuprobe --server "$server" --format tsv sweep --t-values 6 --timing graph --cache warm "$@"; }
for i in 1 2 3; do
  sweep --unions 60 --variant per-slot --reps 20 --label run=alone-per-slot-$i >> "$out/spread/alone.tsv" 2>&1
  sweep --unions 60 --variant floor --reps 20 --label run=alone-floor-$i >> "$out/spread/alone.tsv" 2>&1
  sweep --unions 10 --variant union --reps 20 --label run=alone-union-$i >> "$out/spread/alone.tsv" 2>&1
done
for i in 1 2; do
  sweep --unions 10,60 --variant all --reps 20 --order shuffle --label run=shuffle-$i >> "$out/spread/shuffle.tsv" 2>&1
done
sweep --unions 10,60 --variant all --reps 80 --label run=reps80 > "$out/spread/reps80.tsv" 2>&1
kill -TERM $daemon; wait $daemon

cuobjdump -sass bundle/bin/gpuprobed > "$out/sass.txt" 2>&1
cuobjdump -res-usage bundle/bin/gpuprobed 2>&1 | grep -A1 SelNvfp4 > "$out/res-usage.txt"
data=$(mktemp -d)
ncu --clock-control none --target-processes all -k regex:SelNvfp4 -c 8 --set full \
  --import-source no -o "$out/prof" \
  bundle/bin/gpuprobed --isolation none --backend cuda --listen 127.0.0.1:0 --http "" --data-dir "$data" > "$out/ncu-log.txt" 2>&1 &
pid=$!
server=$(await_gpuprobed "$out/ncu-log.txt" $pid) && \
  bundle/bin/gpuprobe --server "$server" --format tsv sweep --t-values 6 --unions 10,60 --variant per-slot,union --reps 2 --timing events > "$out/ncu-sweep.tsv" 2>&1
sleep 1; pkill -TERM -x gpuprobed; wait $pid
ncu -i "$out/prof.ncu-rep" --page details > "$out/ncu-details.txt" 2>&1
ncu -i "$out/prof.ncu-rep" --page raw --csv > "$out/ncu-raw.csv" 2>&1
for i in 2 3 4 5; do
  ncu -i "$out/prof.ncu-rep" --page source --csv --print-source sass --launch-skip $i --launch-count 1 > "$out/source-$i.csv" 2>&1 || true
done
rm -f "$out/prof.ncu-rep"
tail -3 "$out/final/tests.txt"; tail -2 "$out/final/check.txt"
grep -v "^#" "$out/final/targets.tsv" | cut -f1-8,12 | grep -v "^t"
grep -E "^per-slot,(1|3|6|8),|^per-slot,4," "$out/final/geometries.csv" | cut -d, -f1-9
for f in alone shuffle reps80; do echo "== $f"; grep -v "^#" "$out/spread/$f.tsv" | grep -v "^t" | cut -f1-8,12; done
grep -E "SelNvfp4Kernel<|Duration|Executed Ipc A|DRAM Throughput|Registers Per|Achieved Occ" "$out/ncu-details.txt" | head -60
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
