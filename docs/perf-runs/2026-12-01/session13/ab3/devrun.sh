#!/usr/bin/env bash
# Lever table row 127: the session's kernels as committed (the fast SiLU in the cluster K halves'
# gate+up only; bundle/bin, this commit's deploy/make-bundle.sh) against row 121's kernels
# (bundle/base13/bin: the gpuprobed of the group kernels' side-by-side tile writes, before any
# fast SiLU) in one sitting: ab/devrun.sh's deploy/gpu-ab.sh, carried the same way.
exec bash docs/perf-runs/2026-12-01/session13/ab/devrun.sh
