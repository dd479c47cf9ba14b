#!/usr/bin/env bash
# Builds deploy/Containerfile's image with podman and serves a cpu sweep from it: the image's
# check on a machine without a GPU. Prints the sweep (tsv) on stdout, the steps on stderr.
#   deploy/container-check.sh                 base image docker.io/library/debian:12-slim
#   BASE=localhost/debian:12-minbase deploy/container-check.sh   a local base (no registry)
#   PODMAN="podman --runtime /usr/sbin/runc" deploy/container-check.sh   another OCI runtime
# Extra `podman run`/`build` flags (e.g. ulimits a VM refuses to raise): PODMAN_RUN_FLAGS.
set -euo pipefail
cd "$(dirname "$0")/.."
podman_cmd=${PODMAN:-podman}
base=${BASE:-docker.io/library/debian:12-slim}
read -r -a run_flags <<<"${PODMAN_RUN_FLAGS:-}"
image=localhost/gpuprobed:check
name=gpuprobed-check-$$

deploy/make-bundle.sh >&2
$podman_cmd build "${run_flags[@]}" --build-arg "BASE=$base" -f deploy/Containerfile -t "$image" . >&2
port=$((20000 + RANDOM % 20000))
$podman_cmd run -d --name "$name" --network host "${run_flags[@]}" "$image" \
  --backend=cpu --listen="127.0.0.1:$port" --http= >&2
trap '$podman_cmd rm -f "$name" >/dev/null 2>&1 || true' EXIT
for _ in $(seq 50); do
  $podman_cmd logs "$name" 2>&1 | grep -q "listening on 127.0.0.1:$port" && break
  sleep 0.2
done
$podman_cmd logs "$name" >&2
build/client/gpuprobe --server "127.0.0.1:$port" info >&2
build/client/gpuprobe --server "127.0.0.1:$port" --format tsv sweep --experts 64 --hidden 512 \
  --ff 128 --selected 4 --t 3 --reps 5
$podman_cmd stop --time 30 "$name" >&2
echo "container-check: exit status $($podman_cmd inspect --format '{{.State.ExitCode}}' "$name")" >&2
