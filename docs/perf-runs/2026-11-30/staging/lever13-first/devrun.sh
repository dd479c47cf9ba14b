#!/usr/bin/env bash
# Lever 13 (inputs staged by cp.async, one-slot groups without slot_begin, global scales read
# while the inputs arrive) in bundle/ against lever 12's kernels (bundle/base/), one run: tests +
# check (new), targets and geometries for both, targets of the new again, then ncu (full set,
# source-level samples) of the new kernels at t = 1 and t = 6.
set -u
out=$OUT/run
mkdir -p "$out/new" "$out/base"
source deploy/await-daemon.sh
export LD_LIBRARY_PATH=$PWD/bundle/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
deploy/gpu-bench.sh bundle "$out/new" --compare
deploy/gpu-bench.sh bundle/base "$out/base" --compare
deploy/gpu-bench.sh bundle "$out/new2" --quick
cuobjdump -sass bundle/bin/gpuprobed > "$out/sass-new.txt" 2>&1
cuobjdump -res-usage bundle/bin/gpuprobed 2>&1 | grep -A1 SelNvfp4 > "$out/res-usage.txt"
data=$(mktemp -d)
ncu --clock-control none --target-processes all -k regex:SelNvfp4 -c 14 --set full \
  --import-source no -o "$out/prof" \
  bundle/bin/gpuprobed --isolation none --backend cuda --listen 127.0.0.1:0 --http "" --data-dir "$data" > "$out/ncu-log.txt" 2>&1 &
pid=$!
server=$(await_gpuprobed "$out/ncu-log.txt" $pid) && {
  bundle/bin/gpuprobe --server "$server" --format tsv sweep --t-values 1 --variant per-slot --reps 2 --timing events > "$out/ncu-sweep-t1.tsv" 2>&1
  bundle/bin/gpuprobe --server "$server" --format tsv sweep --t-values 6 --unions 10,60 --variant per-slot,union --reps 2 --timing events > "$out/ncu-sweep.tsv" 2>&1
}
sleep 1; pkill -TERM -x gpuprobed; wait $pid
ncu -i "$out/prof.ncu-rep" --page details > "$out/details.txt" 2>&1
for i in 0 1 8 10 11; do
  ncu -i "$out/prof.ncu-rep" --page source --csv --print-source sass --launch-skip $i --launch-count 1 > "$out/source-$i.csv" 2>&1 || true
done
rm -f "$out/prof.ncu-rep"
tail -3 "$out/new/tests.txt"; tail -2 "$out/new/check.txt"
for v in new base new2; do echo "== $v"; grep -v "^#" "$out/$v/targets.tsv" | cut -f1-8,12 | head -14; done
for v in new base; do echo "== $v"; grep -E "^per-slot,(1|3),|^per-slot,6,60,60|^per-slot,8,80,80|^per-slot,4," "$out/$v/geometries.csv" | cut -d, -f1-9; done
grep -E "SelNvfp4Kernel<|Duration|Executed Ipc A" "$out/details.txt" | head -30
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
