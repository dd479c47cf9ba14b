#!/usr/bin/env bash
# Lever table row 123: the gate+up SiLU by __expf and __fdividef (bundle/bin, this commit's
# deploy/make-bundle.sh) against row 121's kernels (bundle/base13/bin now holds the gpuprobed of
# the commit before, the group kernels' tile writes side by side) in one sitting: ab/devrun.sh's
# deploy/gpu-ab.sh, carried the same way.
exec bash docs/perf-runs/2026-12-01/session13/ab/devrun.sh
