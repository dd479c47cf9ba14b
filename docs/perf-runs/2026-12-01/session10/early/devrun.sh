#!/usr/bin/env bash
# Lever table row 77: each computed stage refilled right after its compute (bundle/bin, this
# commit's deploy/make-bundle.sh) against row 74's build (bundle/base74/bin: the kernels of the
# commit before it) in one sitting: deploy/gpu-ab.sh (the new build's whole gpu-bench.sh with the
# GPU tests and `check`, then base, new, base, then gpu-profile.sh's ncu evidence of the new build).
set -u
# carried compressed: the device tool's 64 MiB
gunzip -f bundle/base74/bin/gpuprobed.gz bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz
chmod +x bundle/base74/bin/gpuprobed  # its .gz was written by a redirect: no mode to restore
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base74/bin/gpuprobe
deploy/gpu-ab.sh bundle bundle/base74/bin "$OUT/run"
cat "$OUT/run/summary.txt"
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
