#!/usr/bin/env bash
# Installs the dependencies and builds into build/ with the `release` preset.
#   deploy/build.sh          everything: binaries and tests (the test command's build)
#   deploy/build.sh daemon   gpuprobed, gpuprobe and the bench tools only, without the tests'
#                            packages (the demo's build)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-all}" in
  all) deploy/install-deps.sh test; tests=ON ;;
  daemon) deploy/install-deps.sh build; tests=OFF ;;
  *) echo "usage: $0 [all|daemon]" >&2; exit 2 ;;
esac
cmake --preset release -DGPUPROBE_BUILD_TESTS=$tests >/dev/null
cmake --build --preset release -j"$(nproc)"
