#!/usr/bin/env bash
# Installs every Debian package that gpuprobe's build, tests and demo need. Idempotent: when all
# are present it only checks (well under a second) and installs nothing.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libspdlog-dev libsqlite3-dev
  libgtest-dev libgmock-dev
  libcpp-httplib-dev
  chromium
  patchelf python3-numpy grpc-proto openssl
  systemd
  postgresql-15 libpq-dev
  nodejs kubectl
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
