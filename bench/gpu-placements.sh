#!/usr/bin/env bash
# A kernel change against a base build across weight placements, in one sitting on a GPU host:
# for the warm and then the cold cache, two jobs of each build in turn (base, new, base, new), each
# job a daemon of its own build and 4 blocks of reps on banks moved to fresh device memory, so that
# both where the banks fall and drift of the card show. The runs behind docs/PERF.md's placements
# figures; bench/gpu-ab.sh ends with them.
# Writes into OUT_DIR warm/ and cold/ (base-1, final-1, base-2, final-2: each job's csv and its
# daemon's log) and placements.txt (every arm's gate+up / down medians, job by job).
# BASE_BIN_DIR holds the base build's gpuprobed and gpuprobe (make-bundle.sh's bin/ of another
# commit); they run with BUNDLE_DIR's libraries. SWEEP_FLAGS, where given, name the arms in place
# of `--t-values 1,6,8 --variant per-slot,union,floor` at the serving geometry (for instance
# `--experts 256 --hidden 4096 --ff 1024 --selected 8 --t-values 4 --variant per-slot,floor`).
# usage: bench/gpu-placements.sh BUNDLE_DIR BASE_BIN_DIR OUT_DIR [SWEEP_FLAGS...]
set -uo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 BUNDLE_DIR BASE_BIN_DIR OUT_DIR [SWEEP_FLAGS...]" >&2
  exit 2
fi
source "$(dirname "$0")/../deploy/await-daemon.sh"
source "$(dirname "$0")/ab-builds.sh"
ab_builds gpu-placements "$1" "$2"
out=$3
shift 3
arms=("$@")
[[ ${#arms[@]} -gt 0 ]] || arms=(--t-values 1,6,8 --variant per-slot,union,floor)

# placement_job BIN_DIR CACHE OUT_PREFIX: one job on a daemon of BIN_DIR's build, its rows in
# OUT_PREFIX.csv and the daemon's log in OUT_PREFIX.log.
placement_job() {
  local bin=$1 cache=$2 prefix=$3 data daemon address status
  data=$(mktemp -d)
  "$bin/gpuprobed" --listen 127.0.0.1:0 --backend cuda --http 127.0.0.1:0 --data-dir "$data" \
    >"$prefix.log" 2>&1 &
  daemon=$!
  if address=$(await_gpuprobed "$prefix.log" $daemon); then
    GPUPROBE_SERVER=$address "$bin/gpuprobe" --format csv sweep "${arms[@]}" --blocks 4 \
      --reps 10 --timing graph --cache "$cache" >"$prefix.csv"
    status=$?
  else
    status=1
  fi
  kill -TERM $daemon 2>/dev/null
  wait $daemon 2>/dev/null
  rm -rf "$data"
  [[ $status -eq 0 ]] || echo "gpu-placements: the $cache job of $bin failed (exit $status)" >&2
  return $status
}

failed=0
for cache in warm cold; do
  mkdir -p "$out/$cache" || exit 2
  for round in 1 2; do
    placement_job "$base_bin" "$cache" "$out/$cache/base-$round" || failed=1
    placement_job "$bundle/bin" "$cache" "$out/$cache/final-$round" || failed=1
  done
done

python3 - "$out" >"$out/placements.txt" <<'EOF_PY'
import csv, os, sys
out = sys.argv[1]
jobs = ["base-1", "final-1", "base-2", "final-2"]
print("cache variant t union: gu_us / down_us of " + ", ".join(jobs))
for cache in ["warm", "cold"]:
    arms = {}
    for job in jobs:
        path = os.path.join(out, cache, job + ".csv")
        if not os.path.exists(path):
            continue
        for row in csv.DictReader(open(path)):
            key = (row["variant"], int(row["t"]), int(row["union_size"]))
            arms.setdefault(key, {})[job] = "%.2f / %.2f" % (float(row["gu_us"]), float(row["down_us"]))
    for key in sorted(arms):
        print("%s %s t=%d u=%d: " % ((cache,) + key) +
              " | ".join(arms[key].get(job, "-") for job in jobs))
EOF_PY
cat "$out/placements.txt"
exit $failed
