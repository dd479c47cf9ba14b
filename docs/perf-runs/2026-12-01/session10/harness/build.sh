#!/usr/bin/env bash
# Builds kernel_harness here (nvcc, sm_90a as the project) against the project's kernel sources,
# once per build named on the command line: `base` compiles kernels/moe_sel_kernels.cu as
# committed, any other NAME the same file with NAME.patch (in this folder, or in $PATCHES where
# set: later sessions keep their patches in their own folders) applied. Output: OUT/NAME (RPATH
# $ORIGIN/lib) and OUT/lib/ (the Abseil libraries they load).
# usage: [PATCHES=DIR] build.sh OUT NAME...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../../.." && pwd)
patches=${PATCHES:-$here}
out=$1
shift
mkdir -p "$out/lib"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-std=c++17 -O2 -DNDEBUG -I"$root" -gencode=arch=compute_90a,code=sm_90a
  -Xptxas=-warn-spills -Xcompiler=-pthread)
for name in "$@"; do
  cp "$root/kernels/moe_sel_kernels.cu" "$work/moe_sel_kernels.cu"
  if [[ $name != base ]]; then
    patch -s -d "$work" -p2 < "$patches/$name.patch"
  fi
  nvcc "${flags[@]}" -o "$out/$name" "$here/kernel_harness.cu" "$work/moe_sel_kernels.cu" \
    "$root/kernels/read_floor.cu" "$root/kernels/slot_groups.cc" "$root/kernels/launch_deals.cc" \
    -labsl_status -labsl_statusor -labsl_str_format_internal -labsl_strings -labsl_cord -labsl_raw_logging_internal \
    -Xlinker -rpath -Xlinker '$ORIGIN/lib'
done
ldd "$out/$1" | awk '$2 == "=>" && $3 ~ /libabsl/ {print $3}' | xargs -r -I{} cp -L {} "$out/lib/"
ls -la "$out" "$out/lib" >&2
