# Applies the TIMELINE measurement instrumentation (row 90) to a copy of moe_sel_kernels.cu.
import sys
src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
def rep(old, new):
    global s
    assert s.count(old) == 1, old
    s = s.replace(old, new)
rep("""namespace gpuprobe {
namespace {
""", """namespace gpuprobe {
// TIMELINE (measurement patch, docs/PERF.md row 90): where lane 0 of every warp records its
// events; null: none. Read at the kernel's end only.
__device__ uint32_t* g_sel_timeline = nullptr;
void SetSelTimeline(uint32_t* records) {
  cudaMemcpyToSymbol(g_sel_timeline, &records, sizeof(records));
}
namespace {
// TIMELINE: the global timer's low 32 bits, in ns.
__device__ __forceinline__ uint32_t NowNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return static_cast<uint32_t>(t);
}
""")
rep("""  const BlockTiles bt = MyTiles<kDeal>(p);
""", """  const uint32_t t0 = NowNs();
  // TIMELINE: 8 ns units after t0: e1 prologue begins, e2 prologue issued, e3 inputs staged, e4
  // first item's end, e5 loop's end.
  uint32_t e1 = 0, e2 = 0, e3 = 0, e4 = 0, e5 = 0;
  auto units = [&] { return min((NowNs() - t0) / 8, 0xFFFFu); };
  const BlockTiles bt = MyTiles<kDeal>(p);
""")
rep("""  StageInputs<kOneSlot, kDeal, kEarly, !kGateUpSilu>(""", """  StageInputs<kOneSlot, kDeal, kEarly, !kGateUpSilu>(""")
# prologue lambda: find the lambda body start/end by the two lines
s2 = s
i = s.index("      p, bt, bg, staged, zero, out_scale, row_max, row_input, ")
j = s.index("[&] {", i) + len("[&] {")
s = s[:j] + "\n        e1 = units();" + s[j:]
k = s.index("        for (int stage = 0; stage < kEarly; ++stage) issue_next(stage);\n      });", j)
s = s[:k] + "        for (int stage = 0; stage < kEarly; ++stage) issue_next(stage);\n        e2 = units();\n      });" + s[k + len("        for (int stage = 0; stage < kEarly; ++stage) issue_next(stage);\n      });"):]
rep("""  for (int stage = kEarly; stage < kStages - 1; ++stage) issue_next(stage);
""", """  e3 = units();
  for (int stage = kEarly; stage < kStages - 1; ++stage) issue_next(stage);
""")
rep("""      if (kOneSlot) SumColumnThreads(acc);
""", """      if (e4 == 0) e4 = units();
      if (kOneSlot) SumColumnThreads(acc);
""")
rep("""  WaitCopies<0>();
""", """  WaitCopies<0>();
  e5 = units();
  if (lane == 0) {
    uint32_t* tl = g_sel_timeline;
    if (tl != nullptr) {
      uint32_t smid;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
      uint32_t* r = tl + (int64_t{blockIdx.x} * 32 + warp) * 8;
      r[0] = 0x7A5E0000u | warp;
      r[1] = blockIdx.x | (smid << 16);
      r[2] = t0;
      r[3] = e1 | (e2 << 16);
      r[4] = e3 | (e4 << 16);
      r[5] = e5;
    }
  }
""")
open(dst, 'w').write(s)
