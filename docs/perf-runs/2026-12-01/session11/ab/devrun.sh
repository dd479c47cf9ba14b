#!/usr/bin/env bash
# Lever table row 86: rows 81-83 as committed (the cluster gate+up's 1-pass prologue, the down
# kernels' per-row staging barriers; bundle/bin, this commit's deploy/make-bundle.sh) against the
# session's start (bundle/base11/bin: commit 1e06a32's kernels) in one sitting: deploy/gpu-ab.sh
# (the new build's whole gpu-bench.sh with the GPU tests and `check`, then base, new, base, then
# gpu-profile.sh's ncu evidence of the new build).
set -u
# carried compressed: the device tool's 64 MiB
gunzip -f bundle/base11/bin/gpuprobed.gz bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz \
  bundle/lib/libcrypto.so.3.gz bundle/lib/libprotobuf.so.32.gz
chmod +x bundle/base11/bin/gpuprobed  # its .gz was written by a redirect: no mode to restore
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base11/bin/gpuprobe
deploy/gpu-ab.sh bundle bundle/base11/bin "$OUT/run"
cat "$OUT/run/summary.txt"
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
