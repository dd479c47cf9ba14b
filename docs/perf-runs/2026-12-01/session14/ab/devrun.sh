#!/usr/bin/env bash
# Lever table row 142: the per-slot down's tile output found at the item's start (`pwr`;
# bundle/bin, this commit's deploy/make-bundle.sh) against the session's start (b008efc's
# gpuprobed, row 127's kernels, carried in bundle/base14/bin) in one sitting: session13's
# ab/devrun.sh (deploy/gpu-ab.sh: the new build's whole gpu-bench.sh with the GPU tests and `check`,
# then base, new, base, then gpu-profile.sh's ncu evidence of the new build), which reads its base
# from bundle/base13/bin. (Written as this wrapper after the run; the call ran the same commands
# inline.)
set -u
mv bundle/base14 bundle/base13
exec bash docs/perf-runs/2026-12-01/session13/ab/devrun.sh
