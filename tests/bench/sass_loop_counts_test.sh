#!/usr/bin/env bash
# bench/sass-loop-counts.py on a small source page in ncu's CSV shape: a prologue run once per
# warp, a loop body of 4 instructions (one HMMA) run 10 times, a refill of 2 run 8 times and a
# second launch's table that must be ignored. Checks every number it prints, and that a page
# without an HMMA is refused.
# usage: sass_loop_counts_test.sh SCRIPT
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
page() {
  echo '"Kernel Name","void SelNvfp4Kernel<1, 1>(SelParams)",'
  echo '"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed",'
  echo '"0x10","      S2R R0, SR_TID.X","1","2",'
  echo '"0x20","      LDS.128 R4, [R2]","5","10",'
  echo '"0x30","      LOP3.LUT R8, R4, 0x8e008e00, RZ, 0xc0, !PT","3","10",'
  echo "\"0x40\",\"      $1 R12, R8, R20, R12\",\"9\",\"10\","
  echo '"0x50","  @!P0  BRA 0x20","1","10",'
  echo '"0x60","      LDGSTS.E.BYPASS.128 [R1], desc[UR4][R2.64]","2","8",'
  echo '"0x70","      IMAD R2, R2, 0x10, R3","1","8",'
  echo '"0x80","      EXIT","0","2",'
  echo '"Kernel Name","void SelNvfp4Kernel<0, 1>(SelParams)",'
  echo '"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed",'
  echo '"0x10","      HMMA.16816.F32 R12, R8, R20, R12","9","999",'
}
page "HMMA.16816.F32" >"$dir/source.csv"
"$1" "$dir/source.csv" 2 "toy" >"$dir/out.txt"
expected='# toy: warp instructions per pass of 2 weights per lane (10 passes)
executed on every pass (4): LDS 1, LOP3 1, HMMA 1, BRA 1
executed on 70-99% of passes (2: the ring refill, IssuePass, and the cursor): LDGSTS 1, IMAD 1
per weight: 2.00 on every pass, 2.80 with the refill (weighted by executions); whole kernel 60 warp instructions = 3.00 per weight'
if [[ "$(cat "$dir/out.txt")" != "$expected" ]]; then
  echo "unexpected output:" >&2
  diff <(echo "$expected") "$dir/out.txt" >&2
  exit 1
fi
page "FFMA" >"$dir/no-mma.csv"
if "$1" "$dir/no-mma.csv" 2 2>"$dir/err.txt"; then
  echo "a page without HMMA was accepted" >&2
  exit 1
fi
grep -q "no executed HMMA" "$dir/err.txt"
echo "sass-loop-counts.py: as expected"
