#!/usr/bin/env bash
# Row 103: the cluster kernels leaving at once (cexit0) and without their exchange (cnox), against
# the committed kernels, in the tenth session's harness (two rounds). Carries bundle/kh.
exec bash docs/perf-runs/2026-12-01/session10/harness/devrun.sh base cexit0 cnox
