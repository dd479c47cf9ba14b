#!/usr/bin/env bash
# Reruns of the geometries where run 1 differed: 256/4096/1024/8 at t = 4 and the serving
# geometry at t = 8, new and base kernels alternating, two rounds.
set -u
out=$OUT/run
mkdir -p "$out"
source deploy/await-daemon.sh
date -u > "$out/date.txt"
for round in 1 2; do
  for v in new base; do
    bin=$PWD/bundle/bin; [[ $v == base ]] && bin=$PWD/bundle/base/bin
    data=$(mktemp -d)
    LD_LIBRARY_PATH=$PWD/bundle/lib $bin/gpuprobed --listen 127.0.0.1:0 --backend cuda --http "" --data-dir "$data" > "$out/daemon-$v-$round.log" 2>&1 &
    pid=$!
    server=$(await_gpuprobed "$out/daemon-$v-$round.log" $pid) || exit 1
    export LD_LIBRARY_PATH=$PWD/bundle/lib
    $bin/gpuprobe --server "$server" --format csv sweep --experts 256 --hidden 4096 --ff 1024 --selected 8 --t-values 4 \
      --variant per-slot,floor --timing graph --cache warm --reps 20 > "$out/big-$v-$round.csv" 2>&1
    $bin/gpuprobe --server "$server" --format csv sweep --t-values 8 --variant per-slot --timing graph --cache warm --reps 20 > "$out/t8-$v-$round.csv" 2>&1
    unset LD_LIBRARY_PATH
    kill -TERM $pid; wait $pid
  done
done
for f in "$out"/big-*.csv "$out"/t8-*.csv; do echo "== $(basename $f)"; grep -E "^per-slot" "$f" | cut -d, -f1-9; done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
