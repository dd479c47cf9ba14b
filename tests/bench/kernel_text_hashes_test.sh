#!/usr/bin/env bash
# bench/kernel_text_hashes.py both ways on this build: every kernel it compiles from the sel
# kernels' source is in the built daemon's embedded machine code with the same size and hash,
# every line is name, byte count, SHA-256, and an executable without CUDA machine code or a file
# that is no ELF file is refused with a message naming it.
# usage: kernel_text_hashes_test.sh SCRIPT BUILD_DIR SEL_SOURCE GPUPROBED CLIENT
set -euo pipefail
script=$1 build=$2 source=$3 daemon=$4 client=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "kernel_text_hashes_test: $*" >&2; exit 1; }

"$script" --binary "$daemon" >"$dir/binary.tsv"
"$script" "$build" "$source" >"$dir/source.tsv"
for tsv in binary source; do
  awk -F'\t' 'NF != 3 || $2 !~ /^[1-9][0-9]*$/ || $3 !~ /^[0-9a-f]+$/ || length($3) != 64 {
                bad = 1 }
              END { exit bad }' "$dir/$tsv.tsv" || fail "a malformed line in the $tsv listing"
done
grep -q '^void SelNvfp4Kernel<' "$dir/source.tsv" || fail "no sel kernel compiled from $source"
missing=$(sort "$dir/source.tsv" | comm -23 - <(sort "$dir/binary.tsv"))
[[ -z "$missing" ]] || fail "compiled from source but not in $daemon: $missing"

if "$script" --binary "$client" >"$dir/out" 2>"$dir/err"; then fail "$client was not refused"; fi
grep -qF "$client embeds no uncompressed CUDA machine code" "$dir/err" ||
  fail "no message for $client: $(cat "$dir/err")"
printf 'not an ELF file\n' >"$dir/text"
if "$script" --binary "$dir/text" >"$dir/out" 2>"$dir/err"; then fail "a text file was not refused"; fi
grep -qF "$dir/text is not a 64-bit little-endian ELF file" "$dir/err" ||
  fail "no message for a text file: $(cat "$dir/err")"
[[ ! -s "$dir/out" ]] || fail "a refused file printed rows"
echo "kernel_text_hashes_test: $(wc -l <"$dir/source.tsv") kernels match"
