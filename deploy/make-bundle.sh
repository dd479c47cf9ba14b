#!/usr/bin/env bash
# Makes a relocatable bundle for GPU hosts that have the NVIDIA driver but no gRPC packages:
#   bundle/bin/{gpuprobed,gpuprobe}     RPATH $ORIGIN/../lib
#   bundle/lib/*.so*                    every shared library they load beyond glibc and the driver
#   bundle/tests/                       the GPU test binary, the offline dump verifier and an
#                                       example command probe (copy_bandwidth_probe)
# usage: deploy/make-bundle.sh [OUT_DIR]   (default: bundle/; builds first)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bundle}
deploy/build.sh >/dev/null

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/tests"
cp build/server/gpuprobed build/client/gpuprobe "$out/bin/"
[[ -f build/tests/cuda_backend_test ]] && cp build/tests/cuda_backend_test "$out/tests/"
[[ -f build/bench/copy_bandwidth_probe ]] && cp build/bench/copy_bandwidth_probe "$out/tests/"
cp tests/offline/verify_dump.py "$out/tests/"

# glibc's own libraries and the driver's come from the host.
is_host_library() {
  case "$1" in
    linux-vdso.so* | ld-linux* | libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | \
      libresolv.so* | libcuda.so* | libnvidia*) return 0 ;;
    *) return 1 ;;
  esac
}

for binary in "$out"/bin/* "$out"/tests/*_test; do
  [[ -f "$binary" ]] || continue
  ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'
done | sort -u | while read -r library; do
  name=$(basename "$library")
  is_host_library "$name" || cp -L "$library" "$out/lib/$name"
done

for binary in "$out"/bin/* "$out"/tests/*_test; do
  [[ -f "$binary" ]] && patchelf --set-rpath '$ORIGIN/../lib' "$binary"
done
for library in "$out"/lib/*; do
  patchelf --set-rpath '$ORIGIN' "$library"
done
# Debug info stays in build/; the bundle travels.
strip --strip-debug "$out"/bin/* "$out"/lib/* "$out"/tests/*_test 2>/dev/null || true
echo "bundle: $out ($(du -sh "$out" | cut -f1), $(ls "$out/lib" | wc -l) libraries)"
