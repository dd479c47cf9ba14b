#!/usr/bin/env bash
# Lever table row 151, second call: ncu's DRAM throughput of the read floor's kernel at the
# per-slot union-60 bytes (devrun.sh's floor-ncu/ caught the daemon's 14 calibration reads
# instead: 3 warm-ups and 11 samples of 2 GiB, kept there as a measurement of the calibration
# itself). Launches 15-18: the floor sweep's rep 0 and rep 1, gate+up then down, cold (ncu flushes
# the caches before each). Output: floor.tar.gz in $OUT.
set -u
find bundle -name '*.gz' -exec gunzip -f {} +
chmod +x bundle/bin/*
source deploy/await-daemon.sh
export LD_LIBRARY_PATH=$PWD/bundle/lib
floor=$OUT/floor-ncu2
mkdir -p "$floor"
date -u +%FT%TZ >"$floor/date.txt"
ncu --clock-control none --target-processes all -k regex:ReadFloor --launch-skip 14 -c 4 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats -o "$floor/prof" \
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
tar -C "$OUT" -czf "$OUT/floor.tar.gz" floor-ncu2 && rm -rf "$floor"
