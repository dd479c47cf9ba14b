#!/usr/bin/env bash
# The systemd unit passes `systemd-analyze verify` without a word: an unknown directive or a bad
# value is only a warning there, so any output fails the test. ExecStart points at the built
# daemon, as it would at the installed one.
# usage: systemd_unit_test.sh UNIT_FILE GPUPROBED_BINARY
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed "s|/usr/local/bin/gpuprobed|$2|" "$1" >"$dir/gpuprobed.service"
cd "$dir"
if ! output=$(systemd-analyze verify ./gpuprobed.service 2>&1) || [[ -n "$output" ]]; then
  echo "systemd-analyze verify: $output" >&2
  exit 1
fi
grep -q '^Type=notify$' gpuprobed.service
echo "systemd-analyze verify: clean"
