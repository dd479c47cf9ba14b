#!/usr/bin/env bash
# The probes on a GPU host in one sitting, from a bundle (make-bundle.sh). Writes into OUT_DIR:
#   new/, base/, new2/, base2/  bench/gpu-bench.sh --modes of this build and of a base build,
#                     alternating so that drift of the card shows: the moe-union targets before
#                     and after a change behind the probe interface, in every timing and cache
#                     mode (new/ also runs the GPU tests)
#   read-bandwidth.tsv   the read-bandwidth probe's default sweep, warm and cold
#   read-bandwidth-check.txt  its exactness check (checksums of every size)
#   copy.tsv, copy-show.txt  the bundle's example command probe (copy_bandwidth_probe),
#                     registered with --probe-command, and its job record (telemetry, artifacts)
#   daemon.log, summary.txt
# BASE_BIN_DIR holds the base build's gpuprobed and gpuprobe; they run with BUNDLE_DIR's
# libraries, as in gpu-ab.sh.
# usage: bench/probes-bench.sh BUNDLE_DIR BASE_BIN_DIR OUT_DIR
set -uo pipefail
if [[ $# -ne 3 ]]; then
  echo "usage: $0 BUNDLE_DIR BASE_BIN_DIR OUT_DIR" >&2
  exit 2
fi
here=$(dirname "$0")
source "$here/../deploy/await-daemon.sh"
bundle=$(cd "$1" 2>/dev/null && pwd) || { echo "probes-bench: $1: no such directory" >&2; exit 2; }
base_bin=$(cd "$2" 2>/dev/null && pwd) || { echo "probes-bench: $2: no such directory" >&2; exit 2; }
out=$3
for binary in "$bundle/bin/gpuprobed" "$bundle/bin/gpuprobe" "$base_bin/gpuprobed" \
  "$base_bin/gpuprobe" "$bundle/tests/copy_bandwidth_probe"; do
  [[ -x "$binary" ]] || { echo "probes-bench: $binary is not an executable" >&2; exit 2; }
done
mkdir -p "$out" || exit 2
export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
base=$(mktemp -d)
ln -s "$base_bin" "$base/bin"
ln -s "$bundle/lib" "$base/lib"

"$here/gpu-bench.sh" "$bundle" "$out/new" --modes
"$here/gpu-bench.sh" "$base" "$out/base" --modes
"$here/gpu-bench.sh" "$bundle" "$out/new2" --modes
"$here/gpu-bench.sh" "$base" "$out/base2" --modes

export PATH="$bundle/bin:$PATH"
gpuprobed --listen 127.0.0.1:0 --backend cuda --data-dir "$(mktemp -d)" \
  --probe-command "copy=$bundle/tests/copy_bandwidth_probe" >"$out/daemon.log" 2>&1 &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$base"' EXIT
GPUPROBE_SERVER=$(await_gpuprobed "$out/daemon.log" $daemon) || exit 1
export GPUPROBE_SERVER

gpuprobe --format tsv run read-bandwidth --label run=read-bandwidth >"$out/read-bandwidth.tsv" 2>&1
echo "run exit $?" >>"$out/read-bandwidth.tsv"
gpuprobe run read-bandwidth --check >"$out/read-bandwidth-check.txt" 2>&1
echo "check exit $?" >>"$out/read-bandwidth-check.txt"
gpuprobe --format tsv run command --param command=copy --label run=copy >"$out/copy.tsv" 2>&1
echo "run exit $?" >>"$out/copy.tsv"
gpuprobe show "$(gpuprobe --format tsv jobs --label run=copy | tail -n1 | cut -f1)" \
  >"$out/copy-show.txt" 2>&1

runs=(new base new2 base2)
{
  tail -n 2 "$out/new/tests.txt"
  for run in "${runs[@]}"; do echo "$run: $(tail -n 1 "$out/$run/check.txt")"; done
  for run in "${runs[@]}"; do
    echo "== $run: targets (t, slots, union, gu_us, down_us, section_us, spreads, variant)"
    grep -v -e '^#' -e '^t' "$out/$run/targets.tsv" | cut -f1-8,12
    grep -v -e '^# [^=]' -e '^t' "$out/$run/modes.tsv" | cut -f1-8,12
  done
  echo "== read-bandwidth"
  cat "$out/read-bandwidth.tsv"
  tail -n 3 "$out/read-bandwidth-check.txt"
  echo "== copy"
  cat "$out/copy.tsv"
} >"$out/summary.txt"
cat "$out/summary.txt"
