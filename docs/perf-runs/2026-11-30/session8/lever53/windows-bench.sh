#!/usr/bin/env bash
# Lever table row 53: the plans whose launches the token-window rule concerns, for one build.
# usage: windows-bench.sh BUNDLE_DIR OUT_DIR   (on the GPU host, from the repository root)
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
common=(--variant per-slot,union --timing graph --reps 20)
{
  gpuprobe --format csv sweep --t-values 4 --unions 20,30,35,40 "${common[@]}" --cache warm
  gpuprobe --format csv sweep --experts 256 --hidden 4096 --ff 1024 --selected 8 --t-values 4 \
    --unions 8,16,24,32 "${common[@]}" --cache warm
  gpuprobe --format csv sweep --experts 256 --hidden 4096 --ff 1024 --selected 8 --t-values 4 \
    --unions 8,16,24,32 "${common[@]}" --cache cold
  gpuprobe --format csv sweep --experts 128 --hidden 2080 --ff 1056 --selected 4 --t-values 8 \
    --unions 16,24,32 "${common[@]}" --cache warm
} >"$out/windows.csv" 2>&1
