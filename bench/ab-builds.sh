# shellcheck shell=bash
# Sourced by the scripts that measure a new build against a base build (gpu-ab.sh,
# gpu-placements.sh). ab_builds SCRIPT BUNDLE_DIR BASE_BIN_DIR sets `bundle` and `base_bin` to the
# directories' absolute paths, or exits 2 naming what is missing: a directory, or one of the two
# builds' gpuprobed and gpuprobe. The base's binaries run with the bundle's libraries.
ab_builds() {
  local script=$1 binary
  bundle=$(cd "$2" 2>/dev/null && pwd) || { echo "$script: $2: no such directory" >&2; exit 2; }
  base_bin=$(cd "$3" 2>/dev/null && pwd) || { echo "$script: $3: no such directory" >&2; exit 2; }
  for binary in "$bundle/bin/gpuprobed" "$bundle/bin/gpuprobe" "$base_bin/gpuprobed" \
    "$base_bin/gpuprobe"; do
    [[ -x "$binary" ]] || { echo "$script: $binary is not an executable" >&2; exit 2; }
  done
  export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}
