#!/usr/bin/env bash
# deploy/kubernetes/ checked without a cluster: kubectl kustomize builds it; every document
# passes its kind's API schema and the references between documents hold (k8s-schema/); and
# manifests with a wrong type or a missing Secret are refused, so the check can fail.
# usage: kubernetes_manifests_test.sh SOURCE_DIR WORK_DIR
# Without kubectl (Debian 12 has no package of it) it says so and exits 77, which ctest reports
# as skipped.
set -euo pipefail
if ! command -v kubectl >/dev/null; then
  echo "skipped: kubectl is not installed (Debian 12 has no kubectl package; install it from" \
    "Kubernetes' own repository to run this check)" >&2
  exit 77
fi
src=$1
work=$2
manifests=$src/deploy/kubernetes
checker=$src/tests/deploy/k8s-schema

# The schema package, pinned by its lock file, installed once per build tree.
mkdir -p "$work"
if ! cmp -s "$checker/package-lock.json" "$work/package-lock.json" || [[ ! -d "$work/node_modules" ]]; then
  cp "$checker/package.json" "$checker/package-lock.json" "$work/"
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
cp "$checker/validate.mjs" "$work/"

kubectl kustomize "$manifests" >"$work/built.yaml"
node "$work/validate.mjs" "$work/built.yaml" "$manifests/secrets.example.yaml"

sed 's/containerPort: 7070/containerPort: "7070"/' "$manifests/gpuprobed-daemonset.yaml" >"$work/bad-type.yaml"
sed 's/secretName: gpuprobe-tokens/secretName: gpuprobe-tokenz/' "$manifests/gpuprobed-daemonset.yaml" >"$work/bad-secret.yaml"
for bad in bad-type bad-secret; do
  if node "$work/validate.mjs" "$work/$bad.yaml" "$manifests/secrets.example.yaml" 2>/dev/null; then
    echo "the check passed a broken manifest ($bad.yaml)" >&2
    exit 1
  fi
done
echo "deploy/kubernetes: schema and references hold; broken copies refused" >&2
