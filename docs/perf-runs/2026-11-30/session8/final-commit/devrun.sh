#!/usr/bin/env bash
# The final measurement of the session's final kernels (bundle/bin, the commit of this folder)
# against d9a8c66's (bundle/basefinal/bin): deploy/gpu-ab.sh (GPU tests, `check`, targets twice,
# geometries, the default sweeps in every timing and cache mode, ncu profile).
set -u
# carried compressed: the device tool's 64 MiB
gunzip -f bundle/basefinal/bin/gpuprobed.gz bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/basefinal/bin/gpuprobe
ln -sfn "$PWD/bundle/lib" bundle/basefinal/lib
deploy/gpu-ab.sh bundle bundle/basefinal/bin "$OUT/run"
head -90 "$OUT/run/summary.txt"
rm -f "$OUT/run/profile/sass.txt"
find "$OUT/run" -type f -size +100k ! -name "*.gz" -exec gzip -9 {} \;
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
