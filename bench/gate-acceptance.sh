#!/usr/bin/env bash
# The CI gate's acceptance run (docs/PERF.md, "Verdicts across jobs"): does a history baseline's
# 95% interval hold its 95% for identical code, and does the gate catch a known slowdown? On one
# store, in the order a CI would see them:
#   main     HISTORY + CANDIDATES identical sweeps labelled branch=main; from job HISTORY + 1 on,
#            each is compared, as soon as it ends, with the newest HISTORY main jobs before it
#   restart  CONTROLS identical sweeps from a restarted daemon (new buffers), against main
#   slowed   SLOWED sweeps from a daemon with the known slowdown, against main: on cuda
#            --inject-delay-ns INJECT_NS (a wait in every timed sample), on cpu --cpu-repeat 2
# Identical code is judged at IDENTICAL_THRESHOLD, the slowdown at SLOWED_THRESHOLD.
# Writes into OUT_DIR: verdicts.tsv (one line per candidate arm), summary.txt (printed last),
# sections.tsv (every job's section of each arm and its blocks' sections, to judge other interval
# methods on the same jobs),
# compare/JOB-THRESHOLD.json (compare's whole answers), daemon-*.log.
#
# usage: bench/gate-acceptance.sh cuda|cpu OUT_DIR [sweep flags; default: the backend's below]
# environment: GPUPROBED, GPUPROBE (binaries; default: on PATH, else build/), HISTORY (8),
#   CANDIDATES (42), CONTROLS (10), SLOWED (20), INJECT_NS (2000), IDENTICAL_THRESHOLD (cuda 1%,
#   cpu 10%), SLOWED_THRESHOLD (cuda 0.5%, cpu 10%), LOAD (cpu: 1 runs a busy loop per core
#   throughout, as another CPU-heavy process would)
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/deploy/await-daemon.sh"
backend=$1
out=$(mkdir -p "$2" && cd "$2" && pwd)
shift 2
gpuprobed=${GPUPROBED:-$(command -v gpuprobed || echo "$here/build/server/gpuprobed")}
gpuprobe=${GPUPROBE:-$(command -v gpuprobe || echo "$here/build/client/gpuprobe")}
history=${HISTORY:-8}
case "$backend" in
  cuda)
    sweep=(--t-values 6 --unions 10,60 --timing graph --cache warm --reps 20 --blocks 16
      --precision 0.1% --max-seconds 8)
    slowdown=(--inject-delay-ns "${INJECT_NS:-2000}")
    identical_threshold=${IDENTICAL_THRESHOLD:-1%}
    slowed_threshold=${SLOWED_THRESHOLD:-0.5%}
    ;;
  cpu)
    sweep=(--experts 32 --hidden 1024 --ff 256 --selected 4 --t 2 --reps 17)
    slowdown=(--cpu-repeat 2)
    identical_threshold=${IDENTICAL_THRESHOLD:-10%}
    slowed_threshold=${SLOWED_THRESHOLD:-10%}
    ;;
  *)
    echo "usage: bench/gate-acceptance.sh cuda|cpu OUT_DIR [sweep flags]" >&2
    exit 2
    ;;
esac
(($# > 0)) && sweep=("$@")

data=$(mktemp -d)
daemon=
load=()
stop_daemon() {
  [[ -n "$daemon" ]] && kill -TERM "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  daemon=
}
cleanup() {
  stop_daemon
  ((${#load[@]} > 0)) && kill "${load[@]}" 2>/dev/null
  rm -rf "$data"
}
trap cleanup EXIT

# start_daemon NAME [flags]: a gpuprobed on the one store, logging to daemon-NAME.log.
start_daemon() {
  local name=$1
  shift
  stop_daemon
  "$gpuprobed" --listen 127.0.0.1:0 --http "" --backend "$backend" --data-dir "$data" "$@" \
    >"$out/daemon-$name.log" 2>&1 &
  daemon=$!
  GPUPROBE_SERVER=$(await_gpuprobed "$out/daemon-$name.log" "$daemon") || exit 1
  export GPUPROBE_SERVER
}

# measure PHASE BRANCH THRESHOLD: one sweep labelled branch=BRANCH; when main has HISTORY jobs
# before it, compared with them at THRESHOLD, one verdicts.tsv line per arm.
main_jobs=0
measure() {
  local phase=$1 branch=$2 threshold=$3 job
  job=$("$gpuprobe" submit "${sweep[@]}" --label "branch=$branch,phase=$phase" | tail -n1) || exit 1
  "$gpuprobe" wait "$job" >/dev/null || exit 1
  "$gpuprobe" --format csv show "$job" 2>/dev/null | python3 -c '
import csv, sys
for r in csv.DictReader(sys.stdin):
    arm = " ".join(r[k] for k in ("variant", "t", "slots", "union_size"))
    print("\t".join([sys.argv[1], r["job_id"], arm, r["section_us"], r["block_section_us"]]))' \
    "$phase" \
    >>"$out/sections.tsv" || exit 1
  if [[ "$branch" == main ]]; then
    main_jobs=$((main_jobs + 1))
    ((main_jobs <= history)) && return 0
  fi
  local answer="$out/compare/$job-${threshold%\%}.json"
  "$gpuprobe" --format json compare label:branch=main "$job" --threshold "$threshold" \
    --history "$history" >"$answer" || exit 1
  python3 - "$phase" "$job" "$answer" >>"$out/verdicts.tsv" <<'EOF'
import json, sys
phase, job, path = sys.argv[1:]
r = json.load(open(path))
for a in r["arms"]:
    axes = " ".join(str(x.get("text_value", x.get("int_value"))) for x in a["axes"])
    covered = int(a["ratio_low"] <= 1.0 <= a["ratio_high"])
    print("\t".join([phase, job, axes, "%.5f" % a["ratio"], "%.5f" % a["ratio_low"],
                     "%.5f" % a["ratio_high"], a["verdict"],
                     str(covered), str(len(r["history_job_ids"]))]))
EOF
}

if [[ "$backend" == cpu && "${LOAD:-1}" == 1 ]]; then
  for _ in $(seq "$(nproc)"); do
    (while :; do :; done) &
    load+=($!)
  done
fi
mkdir -p "$out/compare"
printf 'phase\tjob\tarm\tratio\tlow\thigh\tverdict\tcovers_1\thistory_jobs\n' >"$out/verdicts.tsv"
printf 'phase\tjob\tarm\tsection_us\tblock_section_us\n' >"$out/sections.tsv"
echo "gate-acceptance: $backend, sweep ${sweep[*]}, history $history" >&2

start_daemon main
for _ in $(seq $((history + ${CANDIDATES:-42}))); do measure main main "$identical_threshold"; done
start_daemon restart
for _ in $(seq "${CONTROLS:-10}"); do measure restart candidate "$identical_threshold"; done
start_daemon slowed "${slowdown[@]}"
for _ in $(seq "${SLOWED:-20}"); do measure slowed candidate "$slowed_threshold"; done
stop_daemon

# Each job's time on its device, from the daemons' "job J succeeded: N results in S s".
cat "$out"/daemon-*.log | grep -o 'job job-[0-9]* succeeded: .* in [0-9.]* s' |
  awk '{print $2 "\t" $(NF-1)}' >"$out/job-seconds.tsv"

python3 - "$out" "${slowdown[*]}" "$identical_threshold" "$slowed_threshold" \
  >"$out/summary.txt" <<'EOF'
import csv, statistics, sys
out, slowdown, same_at, slowed_at = sys.argv[1:]
rows = list(csv.DictReader(open(out + "/verdicts.tsv"), delimiter="\t"))
seconds = {j: float(s) for j, s in csv.reader(open(out + "/job-seconds.tsv"), delimiter="\t")}
print("phase    threshold  arms  covers_1  coverage  slower faster same unsure  median_ratio  "
      "max_job_s")
for phase, threshold in (("main", same_at), ("restart", same_at), ("slowed", slowed_at)):
    arms = [r for r in rows if r["phase"] == phase]
    if not arms:
        continue
    count = lambda v: sum(r["verdict"] == v for r in arms)
    covered = sum(int(r["covers_1"]) for r in arms)
    jobs = {r["job"] for r in arms}
    print("%-8s %-9s %5d %9d %8.1f%% %6d %6d %4d %6d %13.4f %10.2f" % (
        phase, threshold, len(arms), covered, 100.0 * covered / len(arms), count("slower"),
        count("faster"), count("same"), count("unsure"),
        statistics.median(float(r["ratio"]) for r in arms),
        max(seconds.get(j, float("nan")) for j in jobs)))
print("slowed: %s; candidates judged against the newest main jobs before them" % slowdown)
EOF
cat "$out/summary.txt"
