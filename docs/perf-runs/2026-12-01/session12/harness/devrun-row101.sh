#!/usr/bin/env bash
# Row 101: the committed kernels and the down kernels with more warps, in the tenth session's
# harness (two rounds). Carries bundle/kh (session10/harness/build.sh with PATCHES=this folder).
exec bash docs/perf-runs/2026-12-01/session10/harness/devrun.sh base dw24 dr80 du28
