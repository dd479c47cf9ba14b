#!/usr/bin/env bash
# Lever table row 58: the cluster K halves threshold at 10,240 staged inputs (bundle/t4/bin) against
# the current build (bundle/bin), t45-bench.sh alternating t4, base, t4, base; the variant's
# `check` at t = 4 and 5 (every union, every variant).
set -u
here=docs/perf-runs/2026-11-30/session8/lever58
gunzip -f bundle/t4/bin/gpuprobed.gz bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz
chmod +x bundle/t4/bin/gpuprobed  # its .gz was written by a redirect: no mode to restore
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/t4/bin/gpuprobe
ln -sfn "$PWD/bundle/lib" bundle/t4/lib
for round in t4 base t4-2 base2; do
  b=bundle; [[ $round == t4* ]] && b=bundle/t4
  "$here/t45-bench.sh" "$b" "$OUT/run/t45-$round"
done
source deploy/await-daemon.sh
export LD_LIBRARY_PATH=$PWD/bundle/lib
bundle/t4/bin/gpuprobed --listen 127.0.0.1:0 --backend cuda --http "" --data-dir "$(mktemp -d)" \
  >"$OUT/run/check-daemon.log" 2>&1 &
daemon=$!
server=$(await_gpuprobed "$OUT/run/check-daemon.log" $daemon) && for t in 4 5; do
  bundle/bin/gpuprobe --server "$server" check --t $t >"$OUT/run/check-t$t.txt" 2>&1
  echo "check t=$t exit $?" >>"$OUT/run/check-t$t.txt"
done
kill -TERM $daemon; wait $daemon
for round in t4 base t4-2 base2; do
  echo "== $round"; grep -E "^union," "$OUT/run/t45-$round/t45.csv" | cut -d, -f1-9
done
tail -n 2 "$OUT/run/check-t4.txt" "$OUT/run/check-t5.txt"
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
