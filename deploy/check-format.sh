#!/usr/bin/env bash
# Fails, listing the files, when a tracked C++ or CUDA source differs from what clang-format
# makes of it (.clang-format: Google base, 100 columns). The formatter is Debian 12's
# clang-format 14 (deploy/install-deps.sh test), the same on every developer's machine and CI:
# another version may wrap a few lines differently.
#   deploy/check-format.sh          check
#   deploy/check-format.sh --fix    rewrite the files that differ
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu' '*.cuh')
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
differ=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || differ+=("$f")
done
if ((${#differ[@]} > 0)); then
  echo "check-format: ${#differ[@]} files differ from clang-format (deploy/check-format.sh --fix):" >&2
  printf '  %s\n' "${differ[@]}" >&2
  exit 1
fi
