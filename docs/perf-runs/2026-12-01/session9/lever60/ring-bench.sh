#!/usr/bin/env bash
# Lever table row 60: the union variant at the small unions that take cluster K halves (the
# deeper gate+up ring where it fits: serving geometry t = 5, 6, 8 unions 10-14; the 3-pass ring
# where it does not: t = 6 union 16, 256 / 4096 at t = 4 union 8), graph timing, warm.
# usage: ring-bench.sh BUNDLE_DIR OUT_DIR   (on the GPU host, from the repository root)
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
  gpuprobe --format csv sweep --t-values 5,6,8 --unions 10,12,14,16 "${common[@]}"
  gpuprobe --format csv sweep --experts 256 --hidden 4096 --ff 1024 --selected 8 --t-values 4 \
    --unions 8 "${common[@]}"
} >"$out/ring.csv" 2>&1
