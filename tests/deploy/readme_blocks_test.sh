#!/usr/bin/env bash
# The README's shell blocks stay true: every ```sh block carries a marker on the line before it,
#   <!-- readme-test: runs -->            run here, on the cpu backend, as pasted
#   <!-- readme-test: skip (REASON) -->   not run, saying why (a GPU host, a job of the reader's)
# and this test fails on a block without one, so a new block is either run or excused. Each
# runnable block is run alone by `bash -eo pipefail` in a directory of its own, with `build`,
# `deploy` and `tests` linking to the checkout and copies of `client` and `proto`; `/tmp/` in a block means that directory. A block
# talks to a cpu daemon that this test starts on a free port ($GPUPROBE_SERVER), with a small
# geometry ($MEMRA_MOEU_*) so that a sweep takes seconds on two cores; a block that names its
# own daemons (the fleet) starts them itself.
# usage: readme_blocks_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir=$(realpath "$1")
build_dir=$(realpath "$2")
readme="$source_dir/README.md"

work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/readme-blocks.XXXXXX")
chmod 0711 "$work"  # the fleet block's PostgreSQL runs as the postgres user when this is root
cleanup() {
  for data in "$work"/*/data/PG_VERSION; do
    [[ -f "$data" ]] && "$source_dir/deploy/local-postgres.sh" stop "$(dirname "$(dirname "$data")")" &>/dev/null || true
  done
  pkill -f "$work" 2>/dev/null || true  # daemons a failed block left running
  rm -rf "$work"
}
trap cleanup EXIT

# The blocks, as files: runs-N.sh for the runnable ones; a block without a marker is an error.
awk -v out="$work" '
  /^<!-- readme-test: runs -->$/ { marker = "runs"; next }
  /^<!-- readme-test: skip \(.+\) -->$/ { marker = "skip"; next }
  /^```sh$/ {
    if (marker == "") { printf "README.md:%d: a ```sh block without a readme-test marker\n", NR > "/dev/stderr"; bad = 1 }
    inside = 1; if (marker == "runs") { n++; file = sprintf("%s/runs-%d.sh", out, n); print "# README.md:" NR + 1 > file }
    next
  }
  /^```$/ && inside { inside = 0; marker = ""; file = ""; next }
  inside && file != "" { gsub("/tmp/", out "/"); print > file; next }
  /^$/ { next }
  { marker = "" }
  END { exit bad }
' "$readme"

mkdir "$work/run"
ln -s "$build_dir" "$work/run/build"
ln -s "$source_dir/deploy" "$work/run/deploy"
ln -s "$source_dir/tests" "$work/run/tests"
# Copies, not links, of what a block builds in place (pip builds client/python where it lies).
cp -r "$source_dir/client" "$source_dir/proto" "$work/run/"

source "$source_dir/deploy/await-daemon.sh"
"$build_dir/server/gpuprobed" --backend cpu --listen 127.0.0.1:0 --http "" \
  --data-dir "$work/daemon" 2>"$work/daemon.log" &
daemon=$!
GPUPROBE_SERVER=$(await_gpuprobed "$work/daemon.log" "$daemon")
export GPUPROBE_SERVER
export MEMRA_MOEU_EXPERTS=64 MEMRA_MOEU_HIDDEN=128 MEMRA_MOEU_FF=64 MEMRA_MOEU_SELECTED=10
export MEMRA_MOEU_REPS=3 SHA=readme-test BUILD=1
export PATH="/usr/bin:$PATH"  # Debian's python3, which has numpy, ahead of any other

blocks=("$work"/runs-*.sh)
[[ -e "${blocks[0]}" ]] || { echo "README.md has no runnable block" >&2; exit 1; }
failed=0
for block in "${blocks[@]}"; do
  where=$(head -n1 "$block" | cut -c3-)
  echo "== $where" >&2
  if ! (cd "$work/run" && bash -eo pipefail "$block" >"$block.out" 2>&1); then
    echo "$where: the block failed; it ran:" >&2
    cat "$block" >&2
    echo "-- its output:" >&2
    cat "$block.out" >&2
    failed=1
  fi
done
kill "$daemon"
wait "$daemon" || true
((failed == 0)) && echo "every runnable README block ran (${#blocks[@]})"
exit "$failed"
