# Row 119 (measurement patch): row 117's marks (apply_mkx.py) with rank 0's tile write cut finer.
# A mark after a value reads the global timer only once that value is ready (the timer's read is
# predicated on a test of the value). Rank 0's marks: 4 its wait over, 5 its peer sums loaded,
# then in WriteTile's first column: 6 the slot and staged row known, 7 the two halves' input
# scales loaded, 8 the SiLU's value computed; 9 its tile written (both columns' stores issued).
import os
import subprocess
import sys

from source_edit import Source

here = os.path.dirname(os.path.abspath(__file__))
src, dst = sys.argv[1], sys.argv[2]
subprocess.run([sys.executable, here + "/apply_mkx.py", src, dst], check=True)
source = Source(dst)
rep = source.replace
rep("""template <Deal kDeal>
__device__ __forceinline__ void Mark(int k) {""", """template <Deal kDeal>
__device__ __forceinline__ void MarkAfter(int k, float v) {
  if (kDeal != Deal::kClusterKHalves || threadIdx.x % 32 != 0 || g_sel_timeline == nullptr) return;
  uint64_t t;
  asm volatile(
      "{\\n.reg .pred q;\\nsetp.nan.f32 q, %1, %1;\\n@!q mov.u64 %0, %%globaltimer;\\n"
      "@q mov.u64 %0, 1;\\n}\\n"
      : "=l"(t)
      : "f"(v)
      : "memory");
  g_sel_timeline[(int64_t{blockIdx.x} * 32 + threadIdx.x / 32) * 16 + 2 + k] =
      static_cast<uint32_t>(t);
}
template <Deal kDeal>
__device__ __forceinline__ void Mark(int k) {""")
rep("""    const int slot = bg.slot[local * p.staged_cols + n];
    const int row = StagedRow<kDeal>(p, bt, bg, group, n);
    float scale = out_scale[row];
    if constexpr (kDeal == Deal::kClusterKHalves) {  // K half 1's sums, in their own input scale
""", """    const int slot = bg.slot[local * p.staged_cols + n];
    const int row = StagedRow<kDeal>(p, bt, bg, group, n);
    if (parity == 0) MarkAfter<kDeal>(6, __int_as_float(row + slot));
    float scale = out_scale[row];
    if constexpr (kDeal == Deal::kClusterKHalves) {  // K half 1's sums, in their own input scale
      if (parity == 0) MarkAfter<kDeal>(7, scale + peer_scale[row]);
""")
rep("""      out[0] = gate / (1.0f + expf(-gate)) * up;""", """      out[0] = gate / (1.0f + expf(-gate)) * up;
      if (parity == 0) MarkAfter<kDeal>(8, out[0]);""")
rep("""      for (int k = 0; k < 4; ++k) peer[k] = partials[warp * kPartialFloatsPerWarp + 4 * lane + k];
      WriteTile""", """      for (int k = 0; k < 4; ++k) peer[k] = partials[warp * kPartialFloatsPerWarp + 4 * lane + k];
      MarkAfter<kDeal>(5, peer[0] + peer[1] + peer[2] + peer[3]);
      WriteTile""")
rep("""      Mark<kDeal>(5);""", """      Mark<kDeal>(9);""")
source.write(dst)
