#!/usr/bin/env bash
# Shows device telemetry working on a GPU host, from a bundle (make-bundle.sh). Writes into
# OUT_DIR:
#   quiet.csv, quiet-show.txt   a sweep on an idle GPU and its record (the telemetry: line)
#   info.json, metrics.txt      /api/v1/info (the devices' live readings) and /metrics
#   busy.csv, busy-show.txt     the same sweep while a second gpuprobed runs a sweep on the GPU:
#                               its rows carry a disturbance naming that process
#   require-clean.txt           the same again with --require-clean: the job fails
#   load-show.txt               the second daemon's load job, still running after both
#   daemon.log, other.log       the two daemons' logs
# usage: bench/telemetry-check.sh BUNDLE_DIR OUT_DIR
set -uo pipefail
source "$(dirname "$0")/../deploy/await-daemon.sh"
bundle=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
export PATH="$bundle/bin:$PATH"

# Starts a gpuprobed logging to $1; its pid is then in $!.
start_daemon() {
  gpuprobed --listen 127.0.0.1:0 --backend cuda --http 127.0.0.1:0 --data-dir "$(mktemp -d)" \
    >"$1" 2>&1 &
}

start_daemon "$out/daemon.log"
daemons=($!)
trap 'kill -TERM "${daemons[@]}" 2>/dev/null; wait' EXIT
address=$(await_gpuprobed "$out/daemon.log" "${daemons[0]}") || exit 1
export GPUPROBE_SERVER=$address
http=$(grep -o 'http listening on [^ ]*' "$out/daemon.log" | head -n1 | cut -d' ' -f4)
sweep=(sweep --t-values 2 --reps 20 --timing graph)

gpuprobe --format csv "${sweep[@]}" --label run=quiet >"$out/quiet.csv"
gpuprobe show "$(gpuprobe --format tsv jobs --label run=quiet | tail -n1 | cut -f1)" \
  >"$out/quiet-show.txt" 2>&1
curl -s "http://$http/api/v1/info" >"$out/info.json" || echo "no curl" >"$out/info.json"
curl -s "http://$http/metrics" >"$out/metrics.txt" || echo "no curl" >"$out/metrics.txt"

# Another daemon's worker holds a context and runs kernels on the same GPU meanwhile.
start_daemon "$out/other.log"
daemons+=($!)
other=$(await_gpuprobed "$out/other.log" "${daemons[1]}") || exit 1
load=$(gpuprobe --server "$other" submit --t 6 --reps 10000 --cache cold | tail -n1)
for _ in $(seq 1 100); do
  gpuprobe --server "$other" show "$load" 2>&1 | grep -q "$load: running" && break
  sleep 0.2
done
gpuprobe --format csv "${sweep[@]}" --label run=busy >"$out/busy.csv"
gpuprobe show "$(gpuprobe --format tsv jobs --label run=busy | tail -n1 | cut -f1)" \
  >"$out/busy-show.txt" 2>&1
gpuprobe "${sweep[@]}" --require-clean >"$out/require-clean.txt" 2>&1
echo "sweep --require-clean exit $?" >>"$out/require-clean.txt"
# Still running after both sweeps: the load overlapped them.
gpuprobe --server "$other" show "$load" >"$out/load-show.txt" 2>&1
gpuprobe --server "$other" cancel "$load" >/dev/null
