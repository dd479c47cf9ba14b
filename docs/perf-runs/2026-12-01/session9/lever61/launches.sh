#!/usr/bin/env bash
# Lever table row 61: which deal each union-variant gate+up launch took (ncu's launch statistics:
# grid, cluster size, block size) and its stalls, one cold launch each at t = 5, 6, 8 union 10 and
# t = 6 union 12, of the build in BUNDLE_DIR.
# usage: launches.sh BUNDLE_DIR OUT_DIR   (on the GPU host, from the repository root)
set -uo pipefail
source deploy/await-daemon.sh
bundle=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
export LD_LIBRARY_PATH=$bundle/lib
ncu --clock-control none --target-processes all --kernel-name-base mangled \
  -k regex:SelNvfp4KernelILb1ELb0 -c 8 \
  --section LaunchStats --section Occupancy --section WarpStateStats --section SpeedOfLight \
  -o "$out/prof" "$bundle/bin/gpuprobed" --isolation none --backend cuda --listen 127.0.0.1:0 \
  --http "" --data-dir "$(mktemp -d)" >"$out/ncu-log.txt" 2>&1 &
profiler=$!
server=$(await_gpuprobed "$out/ncu-log.txt" $profiler) || exit 1
for args in "--t-values 5 --unions 10" "--t-values 6 --unions 10" "--t-values 8 --unions 10" \
  "--t-values 6 --unions 12"; do
  # shellcheck disable=SC2086  # the arguments split on purpose
  "$bundle/bin/gpuprobe" --server "$server" --format tsv sweep $args --variant union --reps 2 \
    --timing events >>"$out/ncu-sweep.tsv"
done
pkill -TERM -x gpuprobed
wait $profiler
ncu -i "$out/prof.ncu-rep" --page raw --csv >"$out/ncu-raw.csv"
ncu -i "$out/prof.ncu-rep" --page details >"$out/ncu-details.txt"
rm -f "$out/prof.ncu-rep"
python3 - "$out/ncu-raw.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
h = rows[0]
want = ["Kernel Name", "gpu__time_duration.sum", "launch__grid_size", "launch__block_size",
        "launch__cluster_dim_x", "smsp__issue_active.avg.pct_of_peak_sustained_active"]
idx = [h.index(w) if w in h else None for w in want]
for r in rows[2:]:
    print("\t".join(r[i] if i is not None and i < len(r) else "-" for i in idx))
PY
