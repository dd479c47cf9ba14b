#!/usr/bin/env bash
# The GPU verification and benchmark run behind docs/PERF.md, from a bundle (make-bundle.sh)
# on a GPU host. Writes into OUT_DIR:
#   tests.txt   the GPU tests (exactness over several geometries, timing modes, calibration)
#   check.txt   `gpuprobe check` at the serving geometry, every variant and union
#   info.txt    the daemon's device and calibrated read bandwidth
#   targets.tsv serving geometry, t = 6, unions 10 and 60, all variants, graph timing, warm
#   modes.tsv   (--modes only) the same arms in the other timing and cache modes: events/warm,
#               events/cold, graph/cold
#   geometries.csv  per-slot and floor, graph timing, warm: the serving geometry at t = 1, 3, 6,
#               8 and experts 256 / hidden 4096 / ff 1024 / selected 8 at t = 4 (% of read)
#   sweeps.tsv  the full default sweep, all variants, in events/graph x warm/cold
#   daemon.log  gpuprobed's log
# --quick stops after the first targets.tsv sweep; --modes after modes.tsv (a change to the
# timers shows in every mode); --compare stops after geometries.csv (for a second bundle, e.g. an
# earlier commit's kernels, measured in the same sitting).
# usage: bench/gpu-bench.sh BUNDLE_DIR OUT_DIR [--quick|--modes|--compare]
set -uo pipefail
source "$(dirname "$0")/../deploy/await-daemon.sh"
bundle=$(cd "$1" && pwd)
out=$2
quick=${3:-}
mkdir -p "$out"
export PATH="$bundle/bin:$PATH"

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv \
  >"$out/info.txt" 2>&1
if [[ -x "$bundle/tests/cuda_backend_test" ]]; then
  "$bundle/tests/cuda_backend_test" >"$out/tests.txt" 2>&1
  echo "cuda_backend_test exit $?" >>"$out/tests.txt"
fi

gpuprobed --listen 127.0.0.1:0 --backend cuda --http 127.0.0.1:0 --data-dir "$(mktemp -d)" >"$out/daemon.log" 2>&1 &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null' EXIT
GPUPROBE_SERVER=$(await_gpuprobed "$out/daemon.log" $daemon) || exit 1
export GPUPROBE_SERVER
gpuprobe info >>"$out/info.txt" 2>&1

gpuprobe check --t 6 >"$out/check.txt" 2>&1
echo "check exit $?" >>"$out/check.txt"

gpuprobe --format tsv sweep --t-values 6 --unions 10,60 --variant all --timing graph \
  --cache warm --reps 20 --label run=targets >"$out/targets.tsv" 2>&1
[[ "$quick" == "--quick" ]] && exit 0
if [[ "$quick" == "--modes" ]]; then
  : >"$out/modes.tsv"
  for mode in "events warm" "events cold" "graph cold"; do
    read -r timing cache <<<"$mode"
    echo "# ==== targets --timing $timing --cache $cache" >>"$out/modes.tsv"
    gpuprobe --format tsv sweep --t-values 6 --unions 10,60 --variant all --timing "$timing" \
      --cache "$cache" --reps 20 --label run=modes >>"$out/modes.tsv" 2>&1
  done
  exit 0
fi
gpuprobe --format tsv sweep --t-values 6 --unions 10,60 --variant all --timing graph \
  --cache warm --reps 20 --label run=targets-repeat >>"$out/targets.tsv" 2>&1

gpuprobe --format csv sweep --t-values 1,3,6,8 --variant per-slot,floor --timing graph \
  --cache warm --reps 20 --label run=geometries >"$out/geometries.csv" 2>&1
gpuprobe --format csv sweep --experts 256 --hidden 4096 --ff 1024 --selected 8 --t-values 4 \
  --variant per-slot,floor --timing graph --cache warm --reps 20 --label run=geometries \
  >>"$out/geometries.csv" 2>&1
[[ "$quick" == "--compare" ]] && exit 0

: >"$out/sweeps.tsv"
for timing in events graph; do
  for cache in warm cold; do
    echo "# ==== default sweep, --variant all --timing $timing --cache $cache" >>"$out/sweeps.tsv"
    gpuprobe --format tsv sweep --variant all --timing "$timing" --cache "$cache" \
      >>"$out/sweeps.tsv" 2>&1
  done
done
