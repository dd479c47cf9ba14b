#!/usr/bin/env bash
# The README's test command: set everything up, build, check that the sources are as
# clang-format lays them out (deploy/check-format.sh), and run every test. Tests labelled `gpu`
# skip themselves where no CUDA device is visible.
#
# The tests keep their temporary files (data directories, PostgreSQL clusters, logs) under a
# directory of this run's own (TEST_TMPDIR, which ::testing::TempDir() returns) and remove
# them, also when they fail. Whatever is left there afterwards (a test that was killed, or one
# that does not clean up) is listed, stopped, removed, and fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/build.sh
deploy/check-format.sh
TEST_TMPDIR=$(mktemp -d /tmp/gpuprobe-tests.XXXXXX)
chmod 0711 "$TEST_TMPDIR"  # the postgres user must reach the clusters the tests start in it
export TEST_TMPDIR
status=0
ctest --preset release -j"$(nproc)" || status=$?

left=$(find "$TEST_TMPDIR" -mindepth 1 -maxdepth 1 | sort)
if [[ -n "$left" ]]; then
  echo "run-tests: the tests left these behind in $TEST_TMPDIR:" >&2
  echo "$left" >&2
  for data in "$TEST_TMPDIR"/*/data/PG_VERSION; do
    [[ -f "$data" ]] && deploy/local-postgres.sh stop "$(dirname "$(dirname "$data")")" || true
  done
  status=1
fi
if pgrep -f "$TEST_TMPDIR" >/dev/null; then
  echo "run-tests: processes the tests started are still running:" >&2
  pgrep -af "$TEST_TMPDIR" >&2
  pkill -KILL -f "$TEST_TMPDIR" || true
  status=1
fi
rm -rf "$TEST_TMPDIR"
exit "$status"
