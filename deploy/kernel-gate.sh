#!/usr/bin/env bash
# A CI gate for your own CUDA kernels, from a runner without a GPU: builds the base and the
# candidate module (nvcc -cubin, from the two checkouts' sources) unless given built, sends both
# with the kernel spec to the gpuprobed at GPUPROBE_SERVER in one job (every arm run on each build,
# interleaved rep by rep), writes the markdown summary for the pull request, and exits with
# compare's code: 0 pass, 6 an arm slower beyond its threshold (or unsure, with
# GATE_FAIL_ON=unsure), 1-5 and 7 as every gpuprobe command (1: the job failed, e.g. its check).
#
# usage: deploy/kernel-gate.sh SPEC.json BASE CANDIDATE [SUMMARY.md]
#   BASE, CANDIDATE: .cu sources (built here with $NVCC -cubin $NVCC_FLAGS) or built modules
#   (.cubin, .fatbin, .ptx); SUMMARY.md: where the markdown goes (default: stdout)
# environment: GPUPROBE_SERVER, GPUPROBE_TOKEN (a `kernel` role token), GPUPROBE (the CLI;
#   default build/client/gpuprobe), NVCC (default nvcc), NVCC_FLAGS (default -arch=sm_90a),
#   GATE_FAIL_ON (slower), CI_COMMIT (a label; default: git rev-parse HEAD)
set -uo pipefail
if [[ $# -lt 3 || $# -gt 4 ]]; then
  echo "usage: $0 SPEC.json BASE CANDIDATE [SUMMARY.md]" >&2
  exit 2
fi
spec=$1 base=$2 candidate=$3 summary=${4:-/dev/stdout}
gpuprobe=${GPUPROBE:-$(dirname "$0")/../build/client/gpuprobe}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# module SOURCE_OR_MODULE NAME: the module's path, built from a .cu source first.
module() {
  if [[ $1 != *.cu ]]; then
    echo "$1"
    return 0
  fi
  # shellcheck disable=SC2086  # NVCC_FLAGS is a list of flags
  "${NVCC:-nvcc}" -cubin ${NVCC_FLAGS:--arch=sm_90a} -o "$work/$2.cubin" "$1" >&2 || return 2
  echo "$work/$2.cubin"
}
base_module=$(module "$base" base) || exit 2
candidate_module=$(module "$candidate" candidate) || exit 2

commit=${CI_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
"$gpuprobe" --format markdown kernel --spec "$spec" --baseline "$base_module" \
  --candidate "$candidate_module" --fail-on "${GATE_FAIL_ON:-slower}" \
  --label "commit=$commit" >"$summary"
code=$?
echo "kernel-gate: exit $code" >&2
exit $code
