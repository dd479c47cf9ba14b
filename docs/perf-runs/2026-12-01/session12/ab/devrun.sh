#!/usr/bin/env bash
# Lever table row 100: the early start as a deal of its own (`Deal::kEarlyConsecutive`, taken by
# `EarlyStartPays`; bundle/bin, this commit's deploy/make-bundle.sh) against the committed kernels
# before it (bundle/base12/bin: commit 24c55c1's, row 86's machine code) in one sitting:
# deploy/gpu-ab.sh (the new build's whole gpu-bench.sh with the GPU tests and `check`, then base,
# new, base, then gpu-profile.sh's ncu evidence of the new build).
set -u
# carried compressed: the device tool's 64 MiB
gunzip -f bundle/base12/bin/gpuprobed.gz bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz \
  bundle/lib/libcrypto.so.3.gz bundle/lib/libprotobuf.so.32.gz
chmod +x bundle/base12/bin/gpuprobed  # its .gz was written by a redirect: no mode to restore
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base12/bin/gpuprobe
deploy/gpu-ab.sh bundle bundle/base12/bin "$OUT/run"
cat "$OUT/run/summary.txt"
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
