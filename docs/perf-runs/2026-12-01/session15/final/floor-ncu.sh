#!/usr/bin/env bash
# ncu's SpeedOfLight and memory sections of the read floor's kernel in a daemon serving the floor
# variant at the per-slot union-60 bytes (t = 6, 2 reps, event timing), from the bundle's
# binaries: 4 ReadFloor launches after the first SKIP (the daemon's calibration makes 14).
# Extra arguments go to ncu. Writes OUT_DIR/ncu-details.txt, ncu-log.txt, ncu-sweep.tsv.
# usage: floor-ncu.sh SKIP OUT_DIR [NCU_ARGS...]   (from the repository root)
set -u
skip=$1
floor=$2
shift 2
source deploy/await-daemon.sh
export LD_LIBRARY_PATH=$PWD/bundle/lib
mkdir -p "$floor"
ncu --clock-control none --target-processes all -k regex:ReadFloor --launch-skip "$skip" -c 4 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis "$@" -o "$floor/prof" \
  bundle/bin/gpuprobed --isolation none --backend cuda --listen 127.0.0.1:0 --http "" \
  --data-dir "$(mktemp -d)" >"$floor/ncu-log.txt" 2>&1 &
profiler=$!
server=$(await_gpuprobed "$floor/ncu-log.txt" $profiler)
bundle/bin/gpuprobe --server "$server" --format tsv sweep --t-values 6 --unions 60 \
  --variant floor --reps 2 --timing events >"$floor/ncu-sweep.tsv"
pkill -TERM -x gpuprobed
wait $profiler
ncu -i "$floor/prof.ncu-rep" --page details >"$floor/ncu-details.txt"
rm -f "$floor/prof.ncu-rep"
