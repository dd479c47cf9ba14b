#!/usr/bin/env bash
# Lever table row 145: the session's kernels as committed (rows 142-144: both consecutive downs
# find their tile outputs at the item's start; bundle/bin, this commit's deploy/make-bundle.sh)
# against the session's start (bundle/base14/bin:
# b008efc's gpuprobed, row 127's kernels) in one sitting: deploy/gpu-ab.sh (the new build's whole
# gpu-bench.sh with the GPU tests and `check`, then base, new, base, then gpu-profile.sh's ncu
# evidence of the new build). As ../ab/devrun.sh (row 142).
set -u
# carried compressed: the device tool's 64 MiB
gunzip -f bundle/base14/bin/gpuprobed.gz bundle/tests/cuda_backend_test.gz bundle/lib/libgrpc.so.29.gz \
  bundle/lib/libcrypto.so.3.gz bundle/lib/libprotobuf.so.32.gz bundle/lib/libstdc++.so.6.gz \
  bundle/lib/libgnutls.so.30.gz bundle/lib/libunistring.so.2.gz bundle/lib/libsqlite3.so.0.gz \
  bundle/lib/libp11-kit.so.0.gz
chmod +x bundle/base14/bin/gpuprobed  # its .gz was written by a redirect: no mode to restore
ln -sfn "$PWD/bundle/bin/gpuprobe" bundle/base14/bin/gpuprobe
deploy/gpu-ab.sh bundle bundle/base14/bin "$OUT/run"
cat "$OUT/run/summary.txt"
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$OUT/run"
