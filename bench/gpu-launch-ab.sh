#!/usr/bin/env bash
# A change to the host side of the launches (the sel kernels' initialize/run split, issue 53)
# against a base build, on a GPU host, alternating so that drift of the card shows: base, new,
# base, new, each a daemon of its own running the default sweep and the targets (t = 6, unions
# 10 and 60, every variant) in events and in graph timing, warm. Then the new build's
# launch-latency (grids of 1, 132 and 1056 blocks) and a short read-bandwidth. The device code
# of the two builds is compared apart from this (bench/kernel_text_hashes.py --binary).
# Writes into OUT_DIR: tests.txt (the card and driver, then the GPU tests), check.txt (the new
# build's exactness check), base1.tsv, new1.tsv, base2.tsv, new2.tsv (the sweeps' TSV, one
# "# ==== NAME" line before each), probes.tsv and summary.txt (bench/launch-ab-summary.py).
# usage: bench/gpu-launch-ab.sh BUNDLE_DIR BASE_BIN_DIR OUT_DIR
set -uo pipefail
if [[ $# -ne 3 ]]; then
  echo "usage: $0 BUNDLE_DIR BASE_BIN_DIR OUT_DIR" >&2
  exit 2
fi
here=$(dirname "$0")
source "$here/ab-builds.sh"
source "$here/../deploy/await-daemon.sh"
ab_builds gpu-launch-ab "$1" "$2"
out=$3
mkdir -p "$out" || exit 2

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv \
  >"$out/tests.txt" 2>&1
"$bundle/tests/cuda_backend_test" >>"$out/tests.txt" 2>&1
echo "cuda_backend_test exit $?" >>"$out/tests.txt"

# run NAME BIN_DIR COMMANDS: a daemon of BIN_DIR's build, COMMANDS run against it (the CLI as
# `$cli`), their output into OUT_DIR/NAME.
run() {
  local name=$1 bin=$2 commands=$3 data daemon status
  data=$(mktemp -d)
  "$bin/gpuprobed" --listen 127.0.0.1:0 --backend cuda --http "" --data-dir "$data" \
    >"$data/daemon.log" 2>&1 &
  daemon=$!
  GPUPROBE_SERVER=$(await_gpuprobed "$data/daemon.log" $daemon) || return 1
  export GPUPROBE_SERVER
  cli=$bin/gpuprobe
  eval "$commands" >"$out/$name" 2>&1
  status=$?
  kill -TERM $daemon
  wait $daemon
  rm -rf "$data"
  return $status
}

sweeps='for timing in events graph; do
  echo "# ==== default sweep, $timing, warm"
  "$cli" --format tsv sweep --timing $timing --cache warm --reps 20
  echo "# ==== targets, $timing, warm"
  "$cli" --format tsv sweep --t-values 6 --unions 10,60 --variant all --timing $timing \
    --cache warm --reps 20
done'
run check.txt "$bundle/bin" '"$cli" check --t 6; echo "check exit $?"'
run base1.tsv "$base_bin" "$sweeps"
run new1.tsv "$bundle/bin" "$sweeps"
run base2.tsv "$base_bin" "$sweeps"
run new2.tsv "$bundle/bin" "$sweeps"
run probes.tsv "$bundle/bin" '
  echo "# ==== launch-latency"
  "$cli" --format tsv run launch-latency --param grid_sizes=1,132,1056 --param reps=200
  echo "# ==== read-bandwidth"
  "$cli" --format tsv run read-bandwidth --param default_sizes=false \
    --param sizes_bytes=1048576,134217728,4294967296'
"$here/launch-ab-summary.py" "$out" >"$out/summary.txt"
