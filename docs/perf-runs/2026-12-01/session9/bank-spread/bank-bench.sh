#!/usr/bin/env bash
# Lever table row 59: the per-slot and floor kernels at t = 6 over banks of 512, 60 and 120
# experts (the serving geometry otherwise), alternating, in one daemon start. With 60 experts the
# union-60 arms read the whole bank (110.6 MB of gate+up in 53 contiguous 2 MiB pages); with 512
# the same bytes lie in 60 experts scattered over a 0.94 GB bank.
# usage: bank-bench.sh BUNDLE_DIR OUT_DIR   (on the GPU host, from the repository root)
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
gpuprobe info >"$out/info.txt" 2>&1
for round in 1 2; do
  for experts in 512 60 120; do
    gpuprobe --format csv sweep --experts "$experts" --t-values 6 --unions 10,60 \
      --variant per-slot,floor --timing graph --cache warm --reps 20 \
      --label "run=bank-$experts-$round" >"$out/experts-$experts-$round.csv" 2>&1
  done
done
