#!/usr/bin/env bash
# Installs the dependencies and builds everything (binaries and tests) into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"
