#!/usr/bin/env bash
# The README's two commands on a plain Debian 12, in a podman container: a fresh clone of this
# checkout's HEAD, then `deploy/run-demo.sh --format tsv` and `deploy/run-tests.sh` in it, as
# root with nothing installed beyond Debian's minimal base. Prints each command's output and
# exit status; exits 0 only if both passed.
#   deploy/debian12-check.sh                          base image docker.io/library/debian:12
#   BASE=localhost/debian:12-minbase deploy/debian12-check.sh   a local base (no registry), e.g.
#     debootstrap --variant=minbase bookworm ROOT http://deb.debian.org/debian
#     tar -C ROOT -c . | podman import - localhost/debian:12-minbase
# Extra `podman run` flags (e.g. ulimits a VM refuses to raise): PODMAN_RUN_FLAGS, e.g.
#   PODMAN_RUN_FLAGS="--ulimit nofile=16384:16384 --ulimit nproc=32768:32768"
# On a host with hybrid cgroups (cgroup v1 controllers beside v2), where crun refuses to start,
# Debian's runc works: add "--runtime runc" (apt-get install runc).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${BASE:-docker.io/library/debian:12}
read -r -a run_flags <<<"${PODMAN_RUN_FLAGS:-}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q . "$work/src"
echo "debian12-check: $(git -C "$work/src" log -1 --format='%h %s' | cut -c1-80) on $base" >&2
podman run --rm --network host "${run_flags[@]}" -v "$work/src:/src" "$base" bash -c '
  cd /src
  status=0
  echo "== deploy/run-demo.sh --format tsv"
  time deploy/run-demo.sh --format tsv || status=$?
  echo "== run-demo exit status $status"
  tests=0
  echo "== deploy/run-tests.sh"
  time deploy/run-tests.sh || tests=$?
  echo "== run-tests exit status $tests"
  exit $((status != 0 || tests != 0))'
