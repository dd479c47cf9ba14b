#!/usr/bin/env bash
# What jobs cost a PostgreSQL fleet as the fleet grows (docs/PERF.md): for each fleet size, a
# fresh cluster and that many gpuprobed daemons (cpu backend, no worker process, lease LEASE_S) on
# this machine; the database's transactions while the fleet idles for IDLE_S seconds (its
# heartbeats), then while one sweep of about 200 events runs through daemon 0 and a client
# watches it through the last daemon; then, with LOAD_RATE set, a load: LOAD_RATE jobs a second
# for LOAD_S seconds, each LOAD_REPS reps of a small sweep, submitted round robin through the
# daemons, waited for (at most LOAD_WAIT_S more seconds). Prints one TSV line per fleet size on
# stdout:
#   daemons  events  job_s  job_xacts  idle_xacts_per_s  job_excess_xacts  attempts
#   load_jobs  claim_p50_ms  claim_p95_ms  claim_p99_ms  load_xacts_per_job  load_excess_per_job
#   unfinished  requeued  duplicated
# job_excess_xacts is job_xacts less the idle rate over the job's window: the job's own cost.
# attempts above 1 mean a live daemon lost the job's lease. Of the load: a claim is the time from
# a job's submission to its start; unfinished, the jobs not succeeded at the end; requeued, those
# that ran more than once (every daemon lives, so each is a false requeue); duplicated, those
# whose stored results exceed the rows of one run of the sweep. Without LOAD_RATE the load's
# columns are "-". Progress goes to stderr.
# usage: [IDLE_S=20] [LEASE_S=5] [REPS=185] [LOAD_RATE=3 [LOAD_S=60] [LOAD_REPS=1000]
#        [LOAD_WAIT_S=300]] [GPUPROBED=... GPUPROBE=...] bench/fleet-cost.sh [DAEMONS...]
#        (default: 10 100)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
gpuprobed=${GPUPROBED:-$here/build/server/gpuprobed}  # or another build's, to compare
gpuprobe=${GPUPROBE:-$here/build/client/gpuprobe}
[[ -x $gpuprobed && -x $gpuprobe ]] || { echo "fleet-cost: build first (deploy/build.sh)" >&2; exit 2; }
idle_s=${IDLE_S:-20}
lease_s=${LEASE_S:-5}  # the heartbeat is a tenth of it
reps=${REPS:-185}
load_rate=${LOAD_RATE:-}
load_s=${LOAD_S:-60}
load_reps=${LOAD_REPS:-1000}
load_wait_s=${LOAD_WAIT_S:-300}
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

sql() { psql "$store" -Atc "$1"; }

# The load phase's columns (tab-separated) for the fleet whose daemons listen on $addresses.
load() {
  local n=${#addresses[@]} t_start before after t0 t1 jobs interval deadline rows
  interval=$(awk -v r="$load_rate" 'BEGIN { print 1 / r }')
  t_start=$(date +%s%6N)
  before=$(xacts); t0=$(date +%s.%N)
  local i=0 end=$(($(date +%s) + load_s)) submits=()
  while (($(date +%s) < end)); do
    "$gpuprobe" --server "${addresses[i % n]}" submit --experts 8 --hidden 64 --ff 16 \
      --selected 2 --t 1 --reps "$load_reps" >/dev/null 2>>"$work/load-submit.err" &
    submits+=($!)
    i=$((i + 1))
    sleep "$interval"
  done
  wait "${submits[@]}" || echo "fleet-cost: a submit failed: $(tail -n 1 "$work/load-submit.err")" >&2
  echo "fleet-cost: $i jobs submitted; waiting for them" >&2
  deadline=$(($(date +%s) + load_wait_s))
  while (($(date +%s) < deadline)) &&
    (($(sql "SELECT COUNT(*) FROM jobs WHERE created_us >= $t_start AND state IN (4, 5)") > 0)); do
    sleep 1
  done
  after=$(xacts); t1=$(date +%s.%N)
  jobs=$(sql "SELECT COUNT(*) FROM jobs WHERE created_us >= $t_start")
  rows=$(sql "SELECT results FROM jobs WHERE created_us >= $t_start AND state = 1 AND attempts = 1
              GROUP BY results ORDER BY COUNT(*) DESC LIMIT 1")
  sql "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY c), percentile_cont(0.95) WITHIN GROUP
         (ORDER BY c), percentile_cont(0.99) WITHIN GROUP (ORDER BY c)
       FROM (SELECT (started_us - created_us) / 1000.0 AS c FROM jobs
             WHERE created_us >= $t_start AND started_us IS NOT NULL) claims" |
    tr '|' '\t' | awk -F'\t' '{ printf "%.1f\t%.1f\t%.1f", $1, $2, $3 }' >"$work/claims"
  printf '%d\t%s\t%s\t%s\t%d\t%d\t%d' "$jobs" "$(cat "$work/claims")" \
    "$(awk -v x=$((after - before)) -v j="$jobs" 'BEGIN { printf "%.1f", x / j }')" \
    "$(awk -v x=$((after - before)) -v r="$idle_rate" -v a="$t0" -v b="$t1" -v j="$jobs" \
      'BEGIN { printf "%.1f", (x - r * (b - a)) / j }')" \
    "$(sql "SELECT COUNT(*) FROM jobs WHERE created_us >= $t_start AND state <> 1")" \
    "$(sql "SELECT COUNT(*) FROM jobs WHERE created_us >= $t_start AND attempts > 1")" \
    "$(sql "SELECT COUNT(*) FROM jobs WHERE created_us >= $t_start AND results > ${rows:-0}")"
}

printf 'daemons\tevents\tjob_s\tjob_xacts\tidle_xacts_per_s\tjob_excess_xacts\tattempts'
printf '\tload_jobs\tclaim_p50_ms\tclaim_p95_ms\tclaim_p99_ms\tload_xacts_per_job'
printf '\tload_excess_per_job\tunfinished\trequeued\tduplicated\n'
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
  first="" last="" addresses=()
  for ((i = 0; i < n; i++)); do
    for _ in $(seq 600); do
      address=$(grep -o 'listening on [0-9.:]*' "$work/d$i/log" | head -n 1 | cut -d' ' -f3) || true
      [[ -n $address ]] && break
      sleep 0.1
    done
    [[ -n $address ]] || { echo "fleet-cost: daemon $i did not start:" >&2; cat "$work/d$i/log" >&2; exit 1; }
    ((i == 0)) && first=$address
    last=$address
    addresses+=("$address")
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
  printf '%d\t%s\t%.2f\t%d\t%.1f\t%.0f\t%s\t' "$n" "$events" "$job_s" "$job_xacts" \
    "$idle_rate" "$excess" "$attempts"
  if [[ -n $load_rate ]]; then
    echo "fleet-cost: a load of $load_rate jobs a second for ${load_s} s" >&2
    load
    echo
  else
    printf -- '-\t-\t-\t-\t-\t-\t-\t-\t-\n'
  fi
  kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null || true
  pids=()
  "$here/deploy/local-postgres.sh" stop "$work/pg"
done
exit 0
