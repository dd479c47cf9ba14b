#!/usr/bin/env bash
# The README's demo: set everything up, start a gpuprobed of its own on a free port, run a
# default sweep through it, print the table, and stop the daemon.
#
# With a GPU the sweep is the serving geometry (DESIGN.md). Without one the daemon falls back to
# the cpu backend (reference kernels timed on the host) and the sweep shrinks to a geometry that
# finishes in well under a minute on 2 cores. Extra arguments are passed to `gpuprobe sweep`.
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/await-daemon.sh
deploy/build.sh daemon >/dev/null
bin=build

workdir=$(mktemp -d)
"$bin/server/gpuprobed" --listen 127.0.0.1:0 --backend auto --http 127.0.0.1:0 --data-dir "$workdir/data" \
  >"$workdir/gpuprobed.log" 2>&1 &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$workdir"' EXIT

GPUPROBE_SERVER=$(await_gpuprobed "$workdir/gpuprobed.log" $daemon) || exit 1
export GPUPROBE_SERVER

backend=$("$bin/client/gpuprobe" info | awk '$1 == "backend" {print $2}')
# The notes go to stderr: stdout is the sweep's output alone (a table, or with --format tsv, csv or
# json a stream a script can read).
if [[ "$backend" == "cpu" ]]; then
  echo "gpuprobe demo: no GPU here, so gpuprobed runs the cpu backend (reference kernels timed on" >&2
  echo "the host) and the sweep uses a small geometry: experts 256, hidden 2048, ff 512, selected 4," >&2
  echo "t 1..4, 10 reps. These are not GPU figures." >&2
  geometry=(--experts 256 --hidden 2048 --ff 512 --selected 4 --t 4 --reps 10)
else
  echo "gpuprobe demo: default sweep (serving geometry) on the $backend backend" >&2
  geometry=()
fi
echo >&2
"$bin/client/gpuprobe" sweep "${geometry[@]}" "$@"
