#!/usr/bin/env bash
# Does the order of arms within a rep move any median? On a GPU host, from a bundle: the default
# sweep (per-slot, t = 1..6) in each arm order and in events and graph timing, then `gpuprobe
# compare` of rotate and shuffle against fixed (per arm: ratio, 95% interval, verdict).
# Writes OUT_DIR/arm-order.txt (the comparisons) and OUT_DIR/arm-order-daemon.log.
# usage: bench/arm-order-bench.sh BUNDLE_DIR OUT_DIR
set -uo pipefail
source "$(dirname "$0")/../deploy/await-daemon.sh"
bundle=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
export PATH="$bundle/bin:$PATH"
gpuprobed --listen 127.0.0.1:0 --backend cuda --http '' --data-dir "$(mktemp -d)" \
  >"$out/arm-order-daemon.log" 2>&1 &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null' EXIT
GPUPROBE_SERVER=$(await_gpuprobed "$out/arm-order-daemon.log" $daemon) || exit 1
export GPUPROBE_SERVER
: >"$out/arm-order.txt"
for timing in events graph; do
  declare -A job
  for order in fixed rotate shuffle; do
    job[$order]=$(gpuprobe submit --timing "$timing" --order "$order" --reps 20 --wait \
      --label "run=arm-order,timing=$timing,order=$order" 2>/dev/null | tail -n1)
  done
  for order in rotate shuffle; do
    echo "# ==== $timing timing: $order (${job[$order]}) against fixed (${job[fixed]})" \
      >>"$out/arm-order.txt"
    gpuprobe compare "${job[fixed]}" "${job[$order]}" >>"$out/arm-order.txt" 2>&1
  done
done
