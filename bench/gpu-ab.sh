#!/usr/bin/env bash
# A kernel change against a base build in one sitting on a GPU host, alternating so that drift of
# the card shows: the whole benchmark of the new build (gpu-bench.sh), then the base, the new and
# the base again (gpu-bench.sh --compare), then the new build's ncu evidence (gpu-profile.sh), then
# both builds across weight placements (gpu-placements.sh).
# Writes into OUT_DIR final/, base/, new2/, base2/, profile/, placements/ and summary.txt (the
# exactness lines, every run's targets and per-slot geometry rows one after another, and the
# placements' arms).
# BASE_BIN_DIR holds the base build's gpuprobed and gpuprobe (make-bundle.sh's bin/ of another
# commit); they run with BUNDLE_DIR's libraries.
# usage: bench/gpu-ab.sh BUNDLE_DIR BASE_BIN_DIR OUT_DIR
set -uo pipefail
if [[ $# -ne 3 ]]; then
  echo "usage: $0 BUNDLE_DIR BASE_BIN_DIR OUT_DIR" >&2
  exit 2
fi
here=$(dirname "$0")
source "$here/ab-builds.sh"
ab_builds gpu-ab "$1" "$2"
out=$3
mkdir -p "$out" || exit 2
# gpu-bench.sh takes a bundle: the base's is its bin/ beside the new build's lib/.
base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT
ln -s "$base_bin" "$base/bin"
ln -s "$bundle/lib" "$base/lib"

"$here/gpu-bench.sh" "$bundle" "$out/final"
"$here/gpu-bench.sh" "$base" "$out/base" --compare
"$here/gpu-bench.sh" "$bundle" "$out/new2" --compare
"$here/gpu-bench.sh" "$base" "$out/base2" --compare
"$here/gpu-profile.sh" "$bundle" "$out/profile" >"$out/profile-run.txt" 2>&1
echo "gpu-profile exit $?" >>"$out/profile-run.txt"
"$here/gpu-placements.sh" "$bundle" "$base_bin" "$out/placements" >/dev/null

runs=(final base new2 base2)
{
  tail -n 2 "$out/final/tests.txt"
  for run in "${runs[@]}"; do echo "$run: $(tail -n 1 "$out/$run/check.txt")"; done
  for run in "${runs[@]}"; do
    echo "== $run: targets (t, slots, union, gu_us, down_us, section_us, spreads, variant)"
    grep -v -e '^#' -e '^t' "$out/$run/targets.tsv" | cut -f1-8,12
  done
  echo "== per-slot and floor geometries (hidden, variant, t, union: gu_us / down_us of each run)"
  python3 - "$out" "${runs[@]}" <<'EOF_PY'
import csv, os, sys
out, runs = sys.argv[1], sys.argv[2:]
arms = {}
for run in runs:
    # gpu-bench.sh writes the CLI's stderr ("job queued") into the file, and a second sweep appends
    # its own header.
    lines = [l for l in open(os.path.join(out, run, "geometries.csv")) if not l.startswith("gpuprobe:")]
    header = lines[0]
    for row in csv.DictReader([header] + [l for l in lines[1:] if l != header]):
        key = (int(row["hidden"]), row["variant"], int(row["t"]), int(row["union_size"]))
        arms.setdefault(key, {})[run] = "%.2f / %.2f" % (float(row["gu_us"]), float(row["down_us"]))
for key in sorted(arms):
    print("%d %s t=%d u=%d: " % key + " | ".join("%s %s" % (r, arms[key][r]) for r in runs if r in arms[key]))
EOF_PY
  tail -n 4 "$out/profile-run.txt"
  echo "== placements (gpu-placements.sh)"
  cat "$out/placements/placements.txt"
} >"$out/summary.txt"
cat "$out/summary.txt"
