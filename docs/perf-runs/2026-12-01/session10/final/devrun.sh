#!/usr/bin/env bash
# Lever table row 71, the tenth session's closing measurement: the kernels with their rings on a
# 128-byte line and the fast SiLU (bundle/bin, this commit's deploy/make-bundle.sh) against the
# build the session started from (bundle/base66/bin: kernels as d6da6e0's) in one sitting:
# deploy/gpu-ab.sh (the new build's whole gpu-bench.sh with the GPU tests and `check`, then base,
# new, base, then gpu-profile.sh's ncu evidence of the new build).
set -u
# carried compressed: the device tool's 64 MiB
gunzip -f bundle/base66/bin/gpuprobed.gz bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz
chmod +x bundle/base66/bin/gpuprobed  # its .gz was written by a redirect: no mode to restore
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base66/bin/gpuprobe
deploy/gpu-ab.sh bundle bundle/base66/bin "$OUT/run"
cat "$OUT/run/summary.txt"
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
