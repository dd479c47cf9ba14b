#!/usr/bin/env bash
# Lever table row 56: the union variant at the unions around the shared-memory cliff, for one build.
# usage: cliff-bench.sh BUNDLE_DIR OUT_DIR   (on the GPU host, from the repository root)
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
common=(--variant union --timing graph --reps 20 --cache warm)
{
  gpuprobe --format csv sweep --t-values 6 --unions 12,14,15,16,18 "${common[@]}"
  gpuprobe --format csv sweep --t-values 8 --unions 12,13,14,15,16,18 "${common[@]}"
  gpuprobe --format csv sweep --experts 64 --hidden 2560 --ff 640 --selected 8 --t-values 6 \
    --unions 8,16,24 "${common[@]}"
  gpuprobe --format csv sweep --experts 64 --hidden 2560 --ff 640 --selected 16 --t-values 6 \
    --unions 16,32 "${common[@]}"
  gpuprobe --format csv sweep --experts 256 --hidden 4096 --ff 1024 --selected 8 --t-values 4 \
    --unions 8,16 "${common[@]}"
} >"$out/cliff.csv" 2>&1
