#!/usr/bin/env bash
# Installs the Debian packages that gpuprobe needs, by purpose:
#   deploy/install-deps.sh build   building and running gpuprobed and gpuprobe (the demo)
#   deploy/install-deps.sh test    that, and what the tests need (the test command)
# Idempotent: when all are present it only checks (well under a second) and installs nothing.
# A package paired with a command (`npm:npm`) is skipped where that command already exists (a
# Node.js from another source brings its own npm, which Debian's npm package conflicts with).
# kubectl is not in Debian 12: the test that needs it runs where it is installed and says it is
# skipped elsewhere.
set -euo pipefail

build=(
  g++ cmake ninja-build pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler grpc-proto
  libabsl-dev libspdlog-dev libsqlite3-dev libpq-dev libsystemd-dev
  libcpp-httplib-dev libcli11-dev nlohmann-json3-dev
  libssl-dev      # sha256 of modules (libcrypto)
)
test=(
  libgtest-dev libgmock-dev
  clang-format    # deploy/check-format.sh: the sources as .clang-format lays them out
  chromium        # the dashboard's browser tests
  postgresql-15   # the fleet's store
  systemd         # systemd-analyze verify of the unit
  openssl         # certificates for the TLS tests
  python3-numpy   # tests/offline/verify_dump.py
  python3-grpcio python3-protobuf python3-pandas python3-venv python3-wheel  # the Python client's tests
  nodejs:node npm:npm  # the Kubernetes manifests' schema check
)

case "${1:-}" in
  build) wanted=("${build[@]}") ;;
  test) wanted=("${build[@]}" "${test[@]}") ;;
  *) echo "usage: $0 build|test" >&2; exit 2 ;;
esac

missing=()
for entry in "${wanted[@]}"; do
  package=${entry%%:*}
  command=${entry#*:}
  [[ "$command" != "$entry" ]] && command -v "$command" >/dev/null && continue
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
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
