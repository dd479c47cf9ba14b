#!/usr/bin/env bash
# Row 109: the early start's launch rule with a plan whose blocks stage every input row. Carries
# bundle/t12: cuda_backend_test of this commit, and cuda_backend_test_old, the same sources with
# the launcher's EarlyStartPays given `false` for stages_every_input_row (the rule before this
# commit), and the libraries they load. The old binary runs the new geometry's case alone; the
# new one runs every GPU test.
set -u
export LD_LIBRARY_PATH=$PWD/bundle/t12/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
echo "== old rule, e512_h2560_ff256_s128_t2"
bundle/t12/cuda_backend_test_old --gtest_filter='*e512_h2560_ff256_s128_t2*' 2>&1 | tail -30
echo "old exit ${PIPESTATUS[0]}"
echo "== this commit, every GPU test"
bundle/t12/cuda_backend_test 2>&1 | tail -40
echo "new exit ${PIPESTATUS[0]}"
