#!/usr/bin/env bash
# Lever table row 57: one daemon start of one build, the same per-slot mid-union sweep three times.
# usage: levels-bench.sh BUNDLE_DIR OUT_DIR   (on the GPU host, from the repository root)
set -uo pipefail
source deploy/await-daemon.sh
bundle=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
export PATH="$bundle/bin:$PATH"
gpuprobed --listen 127.0.0.1:0 --backend cuda --http 127.0.0.1:0 --data-dir "$(mktemp -d)" \
  >"$out/daemon.log" 2>&1 &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null' EXIT
GPUPROBE_SERVER=$(await_gpuprobed "$out/daemon.log" $daemon) || exit 1
export GPUPROBE_SERVER
for sweep in 1 2 3; do
  gpuprobe --format csv sweep --t-values 6,8 --unions 30,40,50,60 --variant per-slot \
    --timing graph --cache warm --reps 20 >"$out/sweep-$sweep.csv" 2>&1
done
