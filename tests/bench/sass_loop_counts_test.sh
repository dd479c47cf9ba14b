#!/usr/bin/env bash
# bench/sass-loop-counts.py on a small source page in ncu's CSV shape: a prologue run once per
# warp, a loop body of 4 instructions (one HMMA) run 10 times, a refill of 2 run 8 times and a
# second launch's table that must be ignored. Checks every number it prints (the kernel named is a
# wide per-slot down: 1 chunk x 4 octets x 32 = 128 weights a lane and pass), the phases' stall
# samples by reason (ncu's "(Not Issued)" columns left out), and that a page without an HMMA, or
# of another kernel, is refused.
# usage: sass_loop_counts_test.sh SCRIPT
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sel='gpuprobe::sel::SelNvfp4Kernel<(bool)0, (bool)1, (gpuprobe::sel::Deal)0, (int)4>'
page() {
  echo "\"Kernel Name\",\"void $2(gpuprobe::sel::SelParams)\","
  echo '"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed","stall_barrier","stall_long_sb","stall_barrier (Not Issued)",'
  echo '"0x10","      S2R R0, SR_TID.X","1","2","1","0","50",'
  echo '"0x20","      LDS.128 R4, [R2]","5","10","1","4","50",'
  echo '"0x30","      LOP3.LUT R8, R4, 0x8e008e00, RZ, 0xc0, !PT","3","10","0","0","0",'
  echo "\"0x40\",\"      $1 R12, R8, R20, R12\",\"9\",\"10\",\"0\",\"9\",\"0\","
  echo '"0x50","  @!P0  BRA 0x20","1","10","0","0","0",'
  echo '"0x60","      LDGSTS.E.BYPASS.128 [R1], desc[UR4][R2.64]","2","8","0","0","0",'
  echo '"0x70","      IMAD R2, R2, 0x10, R3","1","8","0","0","0",'
  echo '"0x80","      EXIT","0","2","0","0","0",'
  echo '"Kernel Name","void gpuprobe::sel::SelNvfp4Kernel<(bool)1, (bool)1, (gpuprobe::sel::Deal)0, (int)2>(gpuprobe::sel::SelParams)",'
  echo '"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed",'
  echo '"0x10","      HMMA.16816.F32 R12, R8, R20, R12","9","999",'
}
page "HMMA.16816.F32" "$sel" >"$dir/source.csv"
"$1" "$dir/source.csv" "toy" >"$dir/out.txt"
expected='# toy: warp instructions per pass of 128 weights per lane (10 passes)
executed on every pass (4): LDS 1, LOP3 1, HMMA 1, BRA 1
executed on 70-99% of passes (2: the ring refill, IssuePass, and the cursor): LDGSTS 1, IMAD 1
per weight: 0.03 on every pass, 0.04 with the refill (weighted by executions); whole kernel 60 warp instructions = 0.05 per weight
phases, warp instructions a warp (2 warps): before the loop 1 (5% of samples: barrier 1); the loop 28 (95% of samples: long_sb 13, barrier 1); after it 1 (0% of samples)'
if [[ "$(cat "$dir/out.txt")" != "$expected" ]]; then
  echo "unexpected output:" >&2
  diff <(echo "$expected") "$dir/out.txt" >&2
  exit 1
fi
page "FFMA" "$sel" >"$dir/no-mma.csv"
if "$1" "$dir/no-mma.csv" 2>"$dir/err.txt"; then
  echo "a page without HMMA was accepted" >&2
  exit 1
fi
grep -q "no executed HMMA" "$dir/err.txt"
page "HMMA.16816.F32" "gpuprobe::ReadFloorKernel" >"$dir/other.csv"
if "$1" "$dir/other.csv" 2>"$dir/err.txt"; then
  echo "another kernel's page was accepted" >&2
  exit 1
fi
grep -q "not a SelNvfp4Kernel launch" "$dir/err.txt"
echo "sass-loop-counts.py: as expected"
