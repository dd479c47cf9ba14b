#!/usr/bin/env bash
# Lever table row 149: the session's kernels as committed (rows 142-148: both consecutive downs
# find their tile outputs at the item's start, the group down walks its staged rows from
# registers; bundle/bin, this commit's deploy/make-bundle.sh) against b008efc's gpuprobed
# (bundle/base14/bin) in one sitting: ../ab/devrun.sh (row 142), carried the same way, with four
# more of the bundle's libraries carried compressed (the tracked tree had grown).
gunzip -f bundle/lib/libgrpc++.so.1.51.gz bundle/lib/libkrb5.so.3.gz bundle/lib/libssl.so.3.gz \
  bundle/lib/libspdlog.so.1.10.gz
exec bash docs/perf-runs/2026-12-01/session14/ab/devrun.sh
