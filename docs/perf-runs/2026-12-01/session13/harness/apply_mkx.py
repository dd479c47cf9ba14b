# Row 117 (measurement patch): marks along the cluster K halves' end, with no load between a mark
# and the code it times (row 115's `tlx` read its record back before each later event, a global
# load that held the warp's later code: its ends were late by that load). The record pointer is a
# __constant__ (read once at entry, where each warp writes its record's header and entry time);
# each mark is one global store of the global timer, read after every earlier instruction
# (a memory clobber). The harness's marks format (row 94: 16 words a warp, ten marks). Marks:
# 1 loop end (after WaitCopies<0>), 2 after ClusterWait, 3 rank 0: before its wait for the
# exchange / rank 1: its sums sent, 4 rank 0: its wait over / rank 1: its rows' out_scale sent,
# 5 rank 0: its tile written (the stores issued). Only the cluster K halves' kernels write.
import sys

from source_edit import Source
src, dst = sys.argv[1], sys.argv[2]
source = Source(src)
rep = source.replace
rep("""namespace gpuprobe {
namespace {
""", """namespace gpuprobe {
// MKX (measurement patch, docs/PERF.md row 117): where lane 0 of every warp records its marks;
// null: none.
__constant__ uint32_t* g_sel_timeline = nullptr;
void SetSelTimeline(uint32_t* records) {
  cudaMemcpyToSymbol(g_sel_timeline, &records, sizeof(records));
}
namespace {
""")
rep("""enum class Deal { kConsecutive, kTokenWindows, kClusterKHalves, kEarlyConsecutive };
""", """enum class Deal { kConsecutive, kTokenWindows, kClusterKHalves, kEarlyConsecutive };
__device__ __forceinline__ uint32_t MarkNow() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return static_cast<uint32_t>(t);
}
template <Deal kDeal>
__device__ __forceinline__ void Mark(int k) {
  if (kDeal != Deal::kClusterKHalves || threadIdx.x % 32 != 0 || g_sel_timeline == nullptr) return;
  g_sel_timeline[(int64_t{blockIdx.x} * 32 + threadIdx.x / 32) * 16 + 2 + k] = MarkNow();
}
""")
rep("""  const BlockTiles bt = MyTiles<kDeal>(p);
  const int chunks = p.cols / kChunkElements;
""", """  if (kDeal == Deal::kClusterKHalves && lane == 0 && g_sel_timeline != nullptr) {
    uint32_t smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    uint32_t* r = g_sel_timeline + (int64_t{blockIdx.x} * 32 + warp) * 16;
    r[0] = 0x7A5F0000u | warp;
    r[1] = blockIdx.x | (smid << 16);
    r[2] = MarkNow();
  }
  const BlockTiles bt = MyTiles<kDeal>(p);
  const int chunks = p.cols / kChunkElements;
""")
rep("""  WaitCopies<0>();
  if constexpr (kDeal == Deal::kClusterKHalves) {""", """  WaitCopies<0>();
  Mark<kDeal>(1);
  if constexpr (kDeal == Deal::kClusterKHalves) {""")
rep("""    ClusterWait();
    if (ClusterRank() == 1) {
      if (warp < items) {
        SendToRankZero(partials + warp * kPartialFloatsPerWarp + 4 * lane, acc, exchange);
      }
      for (int r = threadIdx.x; r < p.staged_rows; r += blockDim.x) {
        SendToRankZero(peer_scale + r, out_scale[r], exchange);
      }
      return;
    }
    if (threadIdx.x == 0) ExpectExchangeBytes(exchange, items * 32 * 16 + p.staged_rows * 4);
    if (warp < items) {
      WaitExchange(exchange);""", """    ClusterWait();
    Mark<kDeal>(2);
    if (ClusterRank() == 1) {
      if (warp < items) {
        SendToRankZero(partials + warp * kPartialFloatsPerWarp + 4 * lane, acc, exchange);
      }
      Mark<kDeal>(3);
      for (int r = threadIdx.x; r < p.staged_rows; r += blockDim.x) {
        SendToRankZero(peer_scale + r, out_scale[r], exchange);
      }
      Mark<kDeal>(4);
      return;
    }
    if (threadIdx.x == 0) ExpectExchangeBytes(exchange, items * 32 * 16 + p.staged_rows * 4);
    Mark<kDeal>(3);
    if (warp < items) {
      WaitExchange(exchange);
      Mark<kDeal>(4);""")
# after the tile write (committed form, or row 113's kwt form)
i = source.text.index("      Mark<kDeal>(4);")
j = source.text.index("\n    }\n    return;\n  }\n", i)
source.text = source.text[:j] + "\n      Mark<kDeal>(5);" + source.text[j:]
source.write(dst)
