#!/usr/bin/env bash
# The evidence behind docs/PERF.md's kernel tables, from a bundle (make-bundle.sh) on a GPU host
# with Nsight Compute. Writes into OUT_DIR:
#   res-usage.txt, sass.txt   registers and shared memory per kernel; the whole SASS
#   ncu-details.txt, ncu-raw.csv  ncu --set full (clocks left alone, caches flushed between
#                             replays) of rep 0 of `sweep --t-values 1,6 --unions 10,60 --variant
#                             per-slot,union`: launches 0-11 = gate+up, down of per-slot t = 1
#                             union 10, t = 6 union 10, t = 6 union 60, then the union variant's
#                             same three arms
#   source-N.csv              SASS-level samples and executions of the per-slot launches 0-5
#   sass-loop-counts.txt      bench/sass-loop-counts.py on those launches
# usage: bench/gpu-profile.sh BUNDLE_DIR OUT_DIR
set -euo pipefail
source "$(dirname "$0")/../deploy/await-daemon.sh"
bundle=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
export LD_LIBRARY_PATH=$bundle/lib
cuobjdump -res-usage "$bundle/bin/gpuprobed" 2>&1 | grep -A1 SelNvfp4 >"$out/res-usage.txt"
cuobjdump -sass "$bundle/bin/gpuprobed" >"$out/sass.txt"

ncu --clock-control none --target-processes all -k regex:SelNvfp4 -c 12 --set full \
  --import-source no -o "$out/prof" \
  "$bundle/bin/gpuprobed" --isolation none --backend cuda --listen 127.0.0.1:0 --http "" \
  --data-dir "$(mktemp -d)" >"$out/ncu-log.txt" 2>&1 &
profiler=$!
server=$(await_gpuprobed "$out/ncu-log.txt" $profiler) || exit 1
"$bundle/bin/gpuprobe" --server "$server" --format tsv sweep --t-values 1,6 --unions 10,60 \
  --variant per-slot,union --reps 2 --timing events >"$out/ncu-sweep.tsv"
# The daemon, not ncu, gets the signal: ncu writes its report once the daemon has exited.
pkill -TERM -x gpuprobed
wait $profiler

ncu -i "$out/prof.ncu-rep" --page details >"$out/ncu-details.txt"
ncu -i "$out/prof.ncu-rep" --page raw --csv >"$out/ncu-raw.csv"
for launch in 0 1 2 3 4 5; do
  ncu -i "$out/prof.ncu-rep" --page source --csv --print-source sass --launch-skip $launch \
    --launch-count 1 >"$out/source-$launch.csv"
done
rm -f "$out/prof.ncu-rep"
arms=("t = 1, union 10" "t = 6, union 10" "t = 6, union 60")
for i in 0 1 2; do
  "$(dirname "$0")/sass-loop-counts.py" "$out/source-$((2 * i)).csv" \
    "sel_gu_silu per-slot, ${arms[i]} (source-$((2 * i)).csv)"
  "$(dirname "$0")/sass-loop-counts.py" "$out/source-$((2 * i + 1)).csv" \
    "sel_down per-slot, ${arms[i]} (source-$((2 * i + 1)).csv)"
done >"$out/sass-loop-counts.txt"
cat "$out/sass-loop-counts.txt"
