#!/usr/bin/env bash
# Lever table row 74: the per-slot down with a 4-pass ring (bundle/bin, this commit's
# deploy/make-bundle.sh) against row 67's build (bundle/base67/bin: commit 76e47ed's kernels, the
# rings on a line) in one sitting: deploy/gpu-ab.sh (the new build's whole gpu-bench.sh with the
# GPU tests and `check`, then base, new, base, then gpu-profile.sh's ncu evidence of the new build).
set -u
# carried compressed: the device tool's 64 MiB
gunzip -f bundle/base67/bin/gpuprobed.gz bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz
chmod +x bundle/base67/bin/gpuprobed  # its .gz was written by a redirect: no mode to restore
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base67/bin/gpuprobe
deploy/gpu-ab.sh bundle bundle/base67/bin "$OUT/run"
cat "$OUT/run/summary.txt"
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
