#!/usr/bin/env bash
# Makes a relocatable bundle for GPU hosts that have the NVIDIA driver but no gRPC packages, from
# CMake's install rules (component "bundle", cmake/Install.cmake):
#   bundle/bin/{gpuprobed,gpuprobe}     RPATH $ORIGIN/../lib
#   bundle/lib/*.so*                    every shared library they load beyond glibc and the driver
#   bundle/share/gpuprobe/web/          the dashboard page, found from bin/ as an installed one
#   bundle/tests/                       the GPU test binary, the offline dump verifier and an
#                                       example command probe (copy_bandwidth_probe)
# usage: deploy/make-bundle.sh [OUT_DIR]   (default: bundle/; builds first)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bundle}
deploy/build.sh >/dev/null

rm -rf "$out"
# CMake's install rules (cmake/Install.cmake): the binaries, the GPU tools, and the binaries'
# runtime dependency set, their RPATH $ORIGIN/../lib. Debug info stays in build/; the symbols
# travel, for backtraces.
cmake --install build --component bundle --prefix "$out" >/dev/null
find "$out" -type f \( -path "$out/bin/*" -o -name '*_test' -o -name '*_probe' \) \
  -exec strip --strip-debug {} +
echo "bundle: $out ($(du -sh "$out" | cut -f1), $(find "$out/lib" -type f | wc -l) libraries)"
