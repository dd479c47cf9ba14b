#!/usr/bin/env bash
# Lever table row 58: the union variant at t = 3, 4, 5 and small unions, for one build.
# usage: t45-bench.sh BUNDLE_DIR OUT_DIR   (on the GPU host, from the repository root)
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
gpuprobe --format csv sweep --t-values 3,4,5 --unions 10,12,14,16 --variant union --timing graph \
  --reps 20 --cache warm >"$out/t45.csv" 2>&1
