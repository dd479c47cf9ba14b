#!/usr/bin/env bash
# Lever table row 34 (a measurement): timelines and times of row 32's k8 (bundle/tsk8) and of k8 with each
# warp's passes in a rotated order (bundle/tsk8r, timeline-k8r.patch: warp w starts each item at its
# pass w mod passes), two check launches each; then base, tsk8 and tsk8r timed, twice.
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
for v in tsk8 tsk8r; do
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
  for v in base tsk8 tsk8r; do
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
# Where a graph-timed launch's time goes between kernels: nsys (if the host has it) traces every
# kernel node of a graph-timed warm sweep of per-slot and floor at union 60 (base bundle).
if command -v nsys >/dev/null || [[ -x /usr/local/cuda/bin/nsys ]]; then
  NSYS=$(command -v nsys || echo /usr/local/cuda/bin/nsys)
  mkdir -p "$out/nsys"
  data=$(mktemp -d)
  $NSYS profile --trace cuda --cuda-graph-trace node -o "$out/nsys/trace" \
    bundle/bin/gpuprobed --listen 127.0.0.1:0 --backend cuda --isolation none --http "" --data-dir "$data" \
    >"$out/nsys/daemon.log" 2>&1 &
  profiler=$!
  server=$(await_gpuprobed "$out/nsys/daemon.log" $profiler) || exit 1
  bundle/bin/gpuprobe --server "$server" --format tsv sweep --t-values 6 --unions 60 --variant per-slot,floor \
    --timing graph --cache warm --reps 4 >"$out/nsys/sweep.tsv" 2>&1
  pkill -TERM -x gpuprobed
  wait $profiler
  $NSYS stats --report cuda_gpu_trace --format csv -o "$out/nsys/gputrace" "$out/nsys/trace.nsys-rep" >/dev/null 2>&1
  rm -f "$out/nsys/trace.nsys-rep" "$out/nsys/trace.sqlite"
  ls "$out/nsys"
else
  echo "no nsys on this host" > "$out/nsys-missing.txt"
fi
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
