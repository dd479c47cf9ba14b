#!/usr/bin/env bash
# A CI gate on gpuprobe: queues this commit's sweep (labels commit and branch, an idempotency
# key so a retried CI step gets the same job), waits for it, and compares it with the history of
# the base branch: its newest GATE_HISTORY (8) succeeded sweeps with the same geometry, timing
# and cache, whose spread between jobs enters the interval. Exits with compare's code: 0 pass,
# 6 slower beyond noise (or unsure, with GATE_FAIL_ON=unsure), 1-5 as every gpuprobe command.
# A slower verdict is confirmed first: the candidate's sweep runs again GATE_CONFIRM times (1), and
# an arm fails the gate only if it is slower in every run (compare --confirm).
# The first run, with no baseline yet, passes and says so; until the base branch has 3 such jobs,
# every verdict is unsure (the note says why). On a cuda daemon the sweep defaults to graph
# timing (--timing graph), to 16 blocks, each on banks placed anew (--blocks 16: a job's value
# averages 16 placements, whose noise would otherwise be the spread between jobs), and to
# sampling every block until each arm's median is known within 0.1%, for at most 8 s in all
# (--precision 0.1% --max-seconds 8); a flag given overrides its default.
#
# usage: deploy/ci-gate.sh [sweep flags, e.g. --t 6 --reps 30]
# environment: GPUPROBE_SERVER, GPUPROBE_TOKEN (as the CLI), GPUPROBE (the CLI; default
#   build/client/gpuprobe), CI_COMMIT (default: git rev-parse HEAD), CI_BRANCH (default: the
#   current git branch), GATE_BASE_BRANCH (main), GATE_THRESHOLD (2%), GATE_HISTORY (8),
#   GATE_FAIL_ON (slower), GATE_CONFIRM (1)
set -uo pipefail
cd "$(dirname "$0")/.."
gpuprobe=${GPUPROBE:-build/client/gpuprobe}
commit=${CI_COMMIT:-$(git rev-parse HEAD)}
branch=${CI_BRANCH:-$(git rev-parse --abbrev-ref HEAD)}
base_branch=${GATE_BASE_BRANCH:-main}

sweep=("$@")
if "$gpuprobe" info 2>/dev/null | grep -q '^backend  *cuda$'; then
  [[ " $* " == *" --timing"* ]] || sweep+=(--timing graph)
  [[ " $* " == *" --blocks"* ]] || sweep+=(--blocks 16)
  [[ " $* " == *" --precision"* ]] || sweep+=(--precision 0.1% --max-seconds 8)
fi

submitted=$("$gpuprobe" submit "${sweep[@]}" --label "commit=$commit,branch=$branch" \
  --idempotency-key "ci-gate-$commit-$branch") || exit $?
job=$(tail -n1 <<<"$submitted")
echo "ci-gate: $job measures $commit on $branch" >&2
"$gpuprobe" wait "$job" >&2 || exit $?

errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
"$gpuprobe" compare "label:branch=$base_branch" "$job" \
  --threshold "${GATE_THRESHOLD:-2%}" --history "${GATE_HISTORY:-8}" \
  --fail-on "${GATE_FAIL_ON:-slower}" --confirm "${GATE_CONFIRM:-1}" 2>"$errors"
code=$?
if ((code == 1)) && grep -q "base: no succeeded " "$errors"; then
  echo "ci-gate: no $base_branch baseline with this sweep yet; $job becomes one on $base_branch" >&2
  exit 0
fi
cat "$errors" >&2
exit $code
