#!/usr/bin/env bash
# Lever table row 53: token windows chosen per launch (bundle/bin, commit of row 53's prediction)
# against the kernels before it (bundle/base53/bin: commit d9a8c66, row 40's kernels):
# deploy/gpu-ab.sh, then windows-bench.sh alternating new, base, new, base, then ncu on the
# windowed gate+up (256 / 4096 / 1024 / 8, t = 4, union 32).
set -u
here=docs/perf-runs/2026-11-30/session8/lever53
# carried compressed: the device tool's 64 MiB
gunzip -f bundle/base53/bin/gpuprobed.gz bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base53/bin/gpuprobe
ln -sfn "$PWD/bundle/lib" bundle/base53/lib
deploy/gpu-ab.sh bundle bundle/base53/bin "$OUT/run"
for round in new base new2 base2; do
  b=bundle; [[ $round == base* ]] && b=bundle/base53
  "$here/windows-bench.sh" "$b" "$OUT/run/windows-$round"
done
export LD_LIBRARY_PATH=$PWD/bundle/lib
source deploy/await-daemon.sh
ncu --clock-control none --target-processes all -k regex:SelNvfp4 -c 2 --section SpeedOfLight \
  --section Occupancy --section LaunchStats --section InstructionStats --section SourceCounters \
  --import-source no -o "$OUT/wprof" bundle/bin/gpuprobed --isolation none --backend cuda \
  --listen 127.0.0.1:0 --http "" --data-dir "$(mktemp -d)" >"$OUT/run/windows-ncu-log.txt" 2>&1 &
profiler=$!
server=$(await_gpuprobed "$OUT/run/windows-ncu-log.txt" $profiler) && bundle/bin/gpuprobe \
  --server "$server" --format tsv sweep --experts 256 --hidden 4096 --ff 1024 --selected 8 \
  --t-values 4 --unions 32 --variant per-slot --reps 2 --timing events >"$OUT/run/windows-ncu-sweep.tsv"
pkill -TERM -x gpuprobed
wait $profiler
ncu -i "$OUT/wprof.ncu-rep" --page details >"$OUT/run/windows-ncu-details.txt"
ncu -i "$OUT/wprof.ncu-rep" --page source --csv --print-source sass --launch-skip 0 \
  --launch-count 1 >"$OUT/run/windows-source-0.csv"
deploy/sass-loop-counts.py "$OUT/run/windows-source-0.csv" 128 \
  "sel_gu_silu per-slot windowed, 256 / 4096, t = 4, union 32" >"$OUT/run/windows-loop-counts.txt"
rm -f "$OUT/wprof.ncu-rep"
head -80 "$OUT/run/summary.txt"
for round in new base new2 base2; do
  echo "== $round"; grep -E "^(per-slot|union)," "$OUT/run/windows-$round/windows.csv" | cut -d, -f1-7
done
cat "$OUT/run/windows-loop-counts.txt"
rm -f "$OUT/run/profile/sass.txt"
find "$OUT/run" -type f -size +100k ! -name "*.gz" -exec gzip -9 {} \;
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
