#!/usr/bin/env bash
# Lever table row 54: the union variant's plans that cluster K halves concern (and their
# neighbours that keep the consecutive deal), for one build.
# usage: halves-bench.sh BUNDLE_DIR OUT_DIR   (on the GPU host, from the repository root)
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
  gpuprobe --format csv sweep --t-values 2,3,6,8 --unions 10,16,20 "${common[@]}"
  gpuprobe --format csv sweep --experts 256 --hidden 4096 --ff 1024 --selected 8 --t-values 4 \
    --unions 8,16 "${common[@]}"
  gpuprobe --format csv sweep --experts 64 --hidden 1024 --ff 256 --selected 4 --t-values 8 \
    --unions 4,8 "${common[@]}"
} >"$out/halves.csv" 2>&1
