#!/usr/bin/env bash
# Lever table row 112: the cluster exchange by st.async (`stas` in its committed, spill-free form;
# bundle/bin, this commit's deploy/make-bundle.sh) against the kernels before it (bundle/base12/bin
# now holds 7729bae's gpuprobed: row 100's kernels) in one sitting: ab/devrun.sh's deploy/gpu-ab.sh.
# Five more libraries travel compressed than in ab/ (the device tool's 64 MiB).
gunzip -f bundle/lib/libstdc++.so.6.gz bundle/lib/libgnutls.so.30.gz bundle/lib/libunistring.so.2.gz \
  bundle/lib/libsqlite3.so.0.gz bundle/lib/libp11-kit.so.0.gz
exec bash docs/perf-runs/2026-12-01/session12/ab/devrun.sh
