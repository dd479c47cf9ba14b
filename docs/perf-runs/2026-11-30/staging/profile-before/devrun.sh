#!/usr/bin/env bash
# Device call: profile main's kernels (ncu full set, source-level stall sampling).
set -u
out=$OUT/run
mkdir -p "$out"
source deploy/await-daemon.sh
export LD_LIBRARY_PATH=$PWD/bundle/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
cuobjdump -res-usage bundle/bin/gpuprobed 2>&1 | grep -A1 SelNvfp4 > "$out/res-usage.txt"
data=$(mktemp -d)
ncu --clock-control none --target-processes all -k regex:SelNvfp4 -c 40 --set full \
  --import-source no -o "$out/prof" \
  bundle/bin/gpuprobed --isolation none --backend cuda --listen 127.0.0.1:0 --http "" --data-dir "$data" > "$out/ncu-log.txt" 2>&1 &
pid=$!
server=$(await_gpuprobed "$out/ncu-log.txt" $pid) && {
  bundle/bin/gpuprobe --server "$server" --format tsv sweep --t-values 6 --unions 10,60 --variant per-slot,union --reps 2 --timing events > "$out/sweep-t6.tsv" 2>&1
  bundle/bin/gpuprobe --server "$server" --format tsv sweep --t-values 1 --variant per-slot --reps 2 --timing events > "$out/sweep-t1.tsv" 2>&1
}
sleep 1; pkill -TERM -x gpuprobed; wait $pid
ncu -i "$out/prof.ncu-rep" --page details > "$out/details.txt" 2>&1
for i in $(seq 0 39); do
  ncu -i "$out/prof.ncu-rep" --page source --csv --print-source sass --launch-skip $i --launch-count 1 > "$out/source-$i.csv" 2>&1 || true
done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
