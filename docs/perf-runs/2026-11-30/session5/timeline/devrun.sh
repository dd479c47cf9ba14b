#!/usr/bin/env bash
# Lever table row 32 (a measurement): timelines of the per-slot kernels' launch at t = 6, union 60
# (bundle/ts: the kernels with timeline.patch; bundle/tsk8: the same with row 28's k8), two check
# launches each; then base, ts and tsk8 timed (per-slot and floor, union 60, graph, warm), twice.
set -u
source deploy/await-daemon.sh
here=docs/perf-runs/2026-11-30/session5/timeline
out=$OUT/run
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/bundle/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
start_daemon() {  # BIN_DIR LOG
  "$1/gpuprobed" --listen 127.0.0.1:0 --backend cuda --http "" --data-dir "$(mktemp -d)" >"$2" 2>&1 &
  daemon=$!
  GPUPROBE_SERVER=$(await_gpuprobed "$2" $daemon) || exit 1
  export GPUPROBE_SERVER
}
for v in ts tsk8; do
  start_daemon bundle/$v/bin "$out/daemon-$v.log"
  for round in 1 2; do
    dump=$(mktemp -d)
    bundle/$v/bin/gpuprobe check --t 6 --unions 60 --variant per-slot --dump "$dump" >"$out/check-$v-$round.txt" 2>&1
    for kernel in h y; do
      python3 $here/timeline.py "$dump/per-slot_t6_u60_${kernel}_out.npy" "$out/timeline-$v-$kernel-$round.tsv" \
        >"$out/summary-$v-$kernel-$round.txt" 2>&1
    done
    rm -rf "$dump"
  done
  kill -TERM $daemon; wait $daemon
done
for round in 1 2; do
  for v in base ts tsk8; do
    dir=bundle/$v/bin; [[ $v == base ]] && dir=bundle/bin
    start_daemon $dir "$out/daemon-time-$v-$round.log"
    $dir/gpuprobe --format tsv sweep --t-values 6 --unions 60 --variant per-slot,floor --timing graph \
      --cache warm --reps 20 --label run=time-$v-$round >"$out/time-$v-$round.tsv" 2>&1
    kill -TERM $daemon; wait $daemon
  done
done
date -u >> "$out/date.txt"
cat "$out"/summary-*.txt
for f in "$out"/time-*.tsv; do echo "== $f"; grep -v "^#" "$f" | cut -f1-8,12 | grep -v "^t"; done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
