#!/usr/bin/env bash
# What one job costs a PostgreSQL fleet as the fleet grows (docs/PERF.md): for each fleet size,
# a fresh cluster and that many gpuprobed daemons (cpu backend, no worker process, lease LEASE_S) on
# this machine; the database's transactions while the fleet idles for IDLE_S seconds (its
# heartbeats), then while one sweep of about 200 events runs through daemon 0 and a client
# watches it through the last daemon. Prints one TSV line per fleet size on stdout:
#   daemons  events  job_s  job_xacts  idle_xacts_per_s  job_excess_xacts  attempts
# job_excess_xacts is job_xacts less the idle rate over the job's window: the job's own cost.
# attempts above 1 mean a live daemon lost the job's lease. Progress goes to stderr.
# usage: [IDLE_S=20] [LEASE_S=5] [REPS=185] [GPUPROBED=... GPUPROBE=...] bench/fleet-cost.sh
#        [DAEMONS...]   (default: 10 100)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
gpuprobed=${GPUPROBED:-$here/build/server/gpuprobed}  # or another build's, to compare
gpuprobe=${GPUPROBE:-$here/build/client/gpuprobe}
[[ -x $gpuprobed && -x $gpuprobe ]] || { echo "fleet-cost: build first (deploy/build.sh)" >&2; exit 2; }
idle_s=${IDLE_S:-20}
lease_s=${LEASE_S:-5}  # the heartbeat is a tenth of it
reps=${REPS:-185}
sizes=("$@")
((${#sizes[@]})) || sizes=(10 100)

work=$(mktemp -d /tmp/gpuprobe_fleet_cost.XXXXXX)
chmod 0711 "$work"
pids=()
cleanup() {
  if ((${#pids[@]})); then kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null; fi
  if [[ -f $work/pg/data/postmaster.pid ]]; then
    "$here/deploy/local-postgres.sh" stop "$work/pg" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT

xacts() {  # committed and rolled-back transactions of the fleet's database so far
  sleep 1.5  # backends report their counts at most once a second
  psql "$store" -Atc "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'postgres'"
}

printf 'daemons\tevents\tjob_s\tjob_xacts\tidle_xacts_per_s\tjob_excess_xacts\tattempts\n'
for n in "${sizes[@]}"; do
  rm -rf "$work/pg" && store=$("$here/deploy/local-postgres.sh" start "$work/pg")
  pids=()
  for ((i = 0; i < n; i++)); do
    mkdir -p "$work/d$i"
    "$gpuprobed" --backend cpu --isolation none --listen 127.0.0.1:0 --http "" \
      --data-dir "$work/d$i" --store "$store" --host-name "h$i" --lease-seconds "$lease_s" \
      >"$work/d$i/log" 2>&1 &
    pids+=($!)
  done
  first="" last=""
  for ((i = 0; i < n; i++)); do
    for _ in $(seq 600); do
      address=$(grep -o 'listening on [0-9.:]*' "$work/d$i/log" | head -n 1 | cut -d' ' -f3) || true
      [[ -n $address ]] && break
      sleep 0.1
    done
    [[ -n $address ]] || { echo "fleet-cost: daemon $i did not start:" >&2; cat "$work/d$i/log" >&2; exit 1; }
    ((i == 0)) && first=$address
    last=$address
  done
  echo "fleet-cost: $n daemons up; idling ${idle_s} s" >&2
  before=$(xacts); t0=$(date +%s.%N); sleep "$idle_s"; after=$(xacts); t1=$(date +%s.%N)
  idle_rate=$(awk -v d=$((after - before)) -v a="$t0" -v b="$t1" 'BEGIN { print d / (b - a) }')

  before=$(xacts); t0=$(date +%s.%N)
  start=$(date +%s.%N)
  id=$("$gpuprobe" --server "$first" submit --experts 64 --hidden 512 --ff 128 --selected 4 \
    --t 6 --reps "$reps" | tail -n 1)
  "$gpuprobe" --server "$last" --format json watch "$id" >"$work/watch.json"
  end=$(date +%s.%N)
  after=$(xacts); t1=$(date +%s.%N)
  job_s=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')
  job_xacts=$((after - before))
  read -r events attempts < <(psql "$store" -Atc \
    "SELECT next_event, attempts FROM jobs WHERE id = '$id'" | tr '|' ' ')
  # The idle fleet's share of the window between the two counts.
  excess=$(awk -v x="$job_xacts" -v r="$idle_rate" -v a="$t0" -v b="$t1" \
    'BEGIN { print x - r * (b - a) }')
  printf '%d\t%s\t%.2f\t%d\t%.1f\t%.0f\t%s\n' "$n" "$events" "$job_s" "$job_xacts" \
    "$idle_rate" "$excess" "$attempts"
  kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null || true
  pids=()
  "$here/deploy/local-postgres.sh" stop "$work/pg"
done
exit 0
