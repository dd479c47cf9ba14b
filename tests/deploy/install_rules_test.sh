#!/usr/bin/env bash
# CMake's install rules: the service's files land where they belong, and the bundle is
# relocatable (every library its binaries load, beyond glibc's and the driver's, comes from its
# own lib/, found through their RPATH, from wherever the bundle is copied).
# usage: install_rules_test.sh BUILD_DIR
set -euo pipefail
build=$1
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/install-rules.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "install_rules_test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/usr" >/dev/null
for file in bin/gpuprobed bin/gpuprobe lib/systemd/system/gpuprobed.service \
    share/gpuprobe/gpuprobed.env share/gpuprobe/grafana/gpuprobe-dashboard.json \
    share/gpuprobe/web/index.html share/gpuprobe/web/sweep.js share/gpuprobe/web/app.js; do
  [[ -f "$work/usr/$file" ]] || fail "cmake --install did not install $file"
done
grep -qx "ExecStart=$work/usr/bin/gpuprobed --data-dir=/var/lib/gpuprobed \$GPUPROBED_FLAGS" \
  "$work/usr/lib/systemd/system/gpuprobed.service" || fail "the unit does not start the installed gpuprobed"

cmake --install "$build" --component bundle --prefix "$work/made" >/dev/null
mv "$work/made" "$work/moved"  # relocated: nothing may point back at where it was made
bundle=$work/moved
for binary in "$bundle"/bin/* "$bundle"/tests/*_test; do
  [[ -f "$binary" ]] || continue
  while read -r name path; do
    case "$name" in
      linux-vdso.so* | ld-linux* | libc.so* | libm.so* | libpthread.so* | libdl.so* | \
        librt.so* | libresolv.so* | libcuda.so* | libnvidia*) continue ;;
    esac
    [[ "$path" == "$bundle/bin/../lib/$name" || "$path" == "$bundle/tests/../lib/$name" ]] ||
      fail "$(basename "$binary") loads $name from $path, not from the bundle"
  done < <(env -u LD_LIBRARY_PATH ldd "$binary" | awk '$2 == "=>" {print $1, $3}')
done
env -i "$bundle/bin/gpuprobe" --help >/dev/null || fail "the bundle's gpuprobe does not run"
[[ -f "$bundle/share/gpuprobe/web/index.html" ]] || fail "the bundle has no dashboard page"
echo "install rules: the service's files and a relocatable bundle ($(find "$bundle/lib" -type f | wc -l) libraries)"
