#!/usr/bin/env bash
# The README's test command: set everything up, build, and run every test. Tests labelled `gpu`
# skip themselves where no CUDA device is visible.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/build.sh
ctest --preset release -j"$(nproc)"
