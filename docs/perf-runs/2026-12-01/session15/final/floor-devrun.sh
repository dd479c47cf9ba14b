#!/usr/bin/env bash
# Lever table row 151, second call: ncu's DRAM throughput of the read floor's kernel at the
# per-slot union-60 bytes (devrun.sh's floor-ncu/ caught the daemon's 14 calibration reads
# instead: 3 warm-ups and 11 samples of 2 GiB, kept there as a measurement of the calibration
# itself). Launches 15-18: the floor sweep's rep 0 and rep 1, gate+up then down, cold (ncu flushes
# the caches before each). Output: floor.tar.gz in $OUT. (The ncu commands, as they ran, moved
# into floor-ncu.sh after the call.)
set -u
find bundle -name '*.gz' -exec gunzip -f {} +
chmod +x bundle/bin/*
floor=$OUT/floor-ncu2
mkdir -p "$floor"
date -u +%FT%TZ >"$floor/date.txt"
bash docs/perf-runs/2026-12-01/session15/final/floor-ncu.sh 14 "$floor" --section LaunchStats
tar -C "$OUT" -czf "$OUT/floor.tar.gz" floor-ncu2 && rm -rf "$floor"
