#!/usr/bin/env bash
# Lever table row 145: the session's kernels as committed (rows 142-144: both consecutive downs
# find their tile outputs at the item's start; bundle/bin, this commit's deploy/make-bundle.sh)
# against b008efc's gpuprobed (bundle/base14/bin) in one sitting: ../ab/devrun.sh (row 142), carried
# the same way.
exec bash docs/perf-runs/2026-12-01/session14/ab/devrun.sh
