#!/usr/bin/env bash
# Lever table row 149: the session's kernels as committed (rows 142-148: both consecutive downs
# find their tile outputs at the item's start, the group down walks its staged rows from
# registers; bundle/bin, this commit's deploy/make-bundle.sh) against b008efc's gpuprobed
# (bundle/base14/bin) in one sitting: ../ab/devrun.sh (row 142), carried the same way.
exec bash docs/perf-runs/2026-12-01/session14/ab/devrun.sh
