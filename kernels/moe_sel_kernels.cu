#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <vector>

#include "common/status_macros.h"
#include "kernels/cuda_status.h"
#include "kernels/fast_divisor.h"
#include "kernels/launch_deals.h"
#include "kernels/moe_sel_kernels.h"
#include "kernels/nvfp4_pack.h"
#include "kernels/slot_groups.h"

namespace gpuprobe {
namespace {

constexpr int kChunkElements = 32;  // 16 code bytes of one row: 4 words, 2 scale blocks
constexpr int kMaxSplits = 8;
// A warp's partial results when a tile's K is split across warps: 4 floats per lane.
constexpr int kPartialFloatsPerWarp = 32 * 4;
// The most shared memory a block may opt in to on the H100/H200.
constexpr int kMaxDynamicSmemBytes = 227 * 1024;

// Chunks per thread per row and pass, and the ring of passes a warp keeps in flight. Once the
// decode is cheap the kernels are bound by latency (ncu: long-scoreboard stalls lead), so codes
// travel in a shared-memory ring filled by cp.async: bytes in flight cost no registers. Gate+up
// rows (80 chunks at the serving geometry) take passes of 2 chunks per thread, the short down
// rows (20 chunks) passes of 1; a ring holds 6 chunks per row, which on union launches (a warp's
// items a few passes long) is most of a warp's codes, but the per-slot down's holds 4 (measured
// with the rings on a 128-byte line, docs/PERF.md rows 72-73: 6% faster than 6 at union 60, and
// 3, 5 and 8 slower; the union down loses 3% with 4). Where the staged inputs of wider groups
// leave too little shared memory, the launcher gives the block fewer warps (PlanLaunch). One
// block per SM of up to 20 warps: the register cap that follows (102 per thread: 5 warps per SM
// sub-partition) has no spills.
template <bool kGateUpSilu, bool kOneSlot>
struct Tuning {
  static constexpr int kChunksPerThread = kGateUpSilu ? 2 : 1;
  static constexpr int kChunksPerPass = 4 * kChunksPerThread;  // 4 column threads per row
  static constexpr int kStages = kGateUpSilu ? 3 : kOneSlot ? 4 : 6;
  // Of the kStages - 1 passes the ring holds ahead, those requested before the inputs are staged
  // (gate+up: both, but 1 in the cluster K halves: the kernel says why; down: 2 of 3 per-slot, 2
  // of 5 otherwise); the rest follow the staging. A warp issuing copies stalls until the SM's
  // memory pipeline takes them (docs/PERF.md rows 35 and 37), so a long prologue delays the
  // staging behind it; a short one leaves the memory idle (rows 39 and 40).
  static constexpr int kPassesBeforeStaging = 2;
  static_assert(kPassesBeforeStaging >= 1 && kPassesBeforeStaging <= kStages - 1);
};
constexpr int kMaxWarps = 20;

// One ring stage of one warp, for rows g and g + 8 of each lane group: codes [row][j][lane]
// (16 bytes each), then the scales: with kWideScaleCopies on IssuePass's short path each row's
// pairs in their global order ([row][j][lane], 2 bytes each, the first half of the space),
// otherwise [row][j][lane] the 4-byte word holding the lane's pair.
__host__ __device__ constexpr int StageBytes(int chunks_per_thread) {
  return chunks_per_thread * 2 * 32 * (16 + 4);
}

// Shared-memory layout of the staged inputs, in 16-byte vectors. Every input row is scaled by a
// power of two and split into f16 hi + lo parts (fp32-level precision on f16 tensor cores).
//
// Column thread c reads chunks 4j + c of a pass, so the four column threads read consecutive
// chunks at once; one vector of padding per chunk puts them in different banks.
//
// Per-slot (one-column) groups: a row is its hi halves, then its lo halves, in element order;
// chunk q's 4 vectors start at 5q, and the lo part starts 4 vectors past a multiple of 8, so a
// hi, a lo and the zero row's vectors of one phase (8 lanes) never share banks.
//
// Wider groups: each slot's row holds, per mma step (4 elements), one vector (hi pair, hi pair,
// lo pair, lo pair); chunk q's 8 vectors start at 9q; rows are 4 vectors past a multiple of 8
// apart.
struct StagedLayout {
  int row_vectors;  // stride between staged rows
  int lo_offset;    // per-slot: where a row's lo halves start
};

__host__ __device__ inline int RoundUp8(int v) { return (v + 7) / 8 * 8; }

__host__ __device__ inline int OneSlotChunkOffset(int q) { return 5 * q; }
__host__ __device__ inline int GroupChunkOffset(int q) { return 9 * q; }

__host__ __device__ inline StagedLayout MakeStagedLayout(bool one_slot, int chunks) {
  if (one_slot) {
    const int part = OneSlotChunkOffset(chunks);
    const int lo = RoundUp8(part) + 4;
    return {RoundUp8(lo + part), lo};
  }
  return {RoundUp8(GroupChunkOffset(chunks)) + 4, 0};
}

// How a launch splits its work: tiles of 16 weight rows of one group, `splits` warps per tile
// (each a contiguous K range), blocks of `warps` warps, each block a contiguous range of tiles.
struct LaunchPlan {
  int blocks = 0;
  int warps = 0;
  int splits = 1;
  int chunks_per_split = 0;
  int groups_per_block = 0;  // the most groups one block's tile range touches
  int staged_rows = 0;       // per block: groups_per_block x the plan's group width, or every input
                             // row where there are fewer
  bool all_input_rows = false;
  int64_t smem_bytes = 0;
};

struct SelParams {
  const uint8_t* codes;  // sel layout
  const uint8_t* scales;
  int64_t expert_code_bytes;
  int64_t expert_scale_bytes;
  int cols;             // K
  int out_rows;         // gu: ff (j values); down: hidden
  int tiles_per_group;  // gu: ff / 8; down: hidden / 16
  int staged_cols;      // the plan's widest group
  // The launch plan's (Launch fills them in).
  int groups = 0;
  int tiles = 0;  // groups * tiles_per_group
  // Block b owns tile_quotient tiles, one more where b < tile_remainder (tiles / blocks).
  int tile_quotient = 0;
  int tile_remainder = 0;
  int splits = 1;
  int chunks_per_split = 0;
  int groups_per_block = 0;    // the most groups one block's tile range touches
  int staged_rows = 0;         // rows of staged inputs per block
  int all_input_rows = 0;      // > 0: every block stages all input rows (fewer than its slots)
  int walk_warps_per_row = 1;  // RowWalk: warps sharing one staged row, for staged_rows rows
  int walk_row_step = 1;       // RowWalk: rows walked at once, warps / walk_warps_per_row
  const float* in;
  int in_row_div;         // input row of slot s is s / in_row_div
  const float* global_a;  // gu: gate; down: down
  const float* global_b;  // gu: up; down: unused
  const int32_t* group_expert;
  const int32_t* group_slot_table;  // [groups][staged_cols], -1 past a group's width
  float* out;                       // [slots][out_rows]
  // The per-item divisions, as multiplications (Launch fills them in).
  FastDivisor splits_divisor, tiles_per_group_divisor, in_row_divisor, walk_divisor,
      staged_cols_divisor;
  // Token windows (TileAt, windowed kernel only): by in_row_div x tiles_per_group.
  FastDivisor window_positions_divisor;
};

__device__ __forceinline__ void Mma16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                         uint32_t a3, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// The two e4m3 block scales of one chunk row (byte 0: block 0), as an f16 pair (exact).
__device__ __forceinline__ uint32_t ScalePairHalf2(uint32_t pair) {
  uint32_t h2;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(static_cast<uint16_t>(pair)));
  return h2;
}

// The same as f32.
__device__ __forceinline__ float2 ChunkScales(uint32_t pair) {
  const uint32_t h2 = ScalePairHalf2(pair);
  return __half22float2(*reinterpret_cast<const __half2*>(&h2));
}

// The 32-bit shared-memory address of a generic pointer into this block's shared memory.
__device__ __forceinline__ uint32_t SharedAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// cp.async: copies to shared memory that bypass registers; a wait_group covers all but the
// newest N commit groups of the thread.
__device__ __forceinline__ void CopyAsync16(void* smem_to, const void* global_from, bool valid) {
  // src-size 0 fills the 16 bytes with zeros and reads nothing.
  const uint32_t to = SharedAddress(smem_to);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(global_from),
               "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void CommitCopies() { asm volatile("cp.async.commit_group;\n"); }

template <int kPending>
__device__ __forceinline__ void WaitCopies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

__device__ __forceinline__ void CopyAsync8(void* smem_to, const void* global_from, bool valid) {
  const uint32_t to = SharedAddress(smem_to);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(to), "l"(global_from),
               "r"(valid ? 8 : 0));
}

__device__ __forceinline__ void CopyAsync4(void* smem_to, const void* global_from, bool valid) {
  const uint32_t to = SharedAddress(smem_to);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(to), "l"(global_from),
               "r"(valid ? 4 : 0));
}

// How a launch deals its work to blocks, one instantiation of the kernel each:
//  - kConsecutive: block b owns a range of consecutive tiles and all of their K.
//  - kTokenWindows (per-slot gate+up, kernels/launch_deals.h says when): consecutive positions,
//    each a tile of one of a token's experts (TileAt).
//  - kClusterKHalves (group plans whose every block stages every input row: the union kernels at
//    small unions): clusters of two blocks own one range of tiles; block rank h computes K half h
//    and stages only that half of each input row, and rank 1's partial sums reach rank 0 through
//    distributed shared memory, where the tiles are written (the kernel's end).
//  - kEarlyConsecutive (per-slot gate+up where EarlyStartPays, kernels/launch_deals.h): as
//    kConsecutive, but the block starts without its group data (StageInputs).
enum class Deal { kConsecutive, kTokenWindows, kClusterKHalves, kEarlyConsecutive };

// Token windows (kTokenWindows): group g serves slot g alone and `selected` (in_row_div) divides
// the groups, so a window is the `selected` groups of one token, one input row. Position i of a
// window is tile i / selected of its group i % selected: the warps of a block, which take
// consecutive positions, read the token's experts at once instead of a stretch of one expert.
// Without windows a block's tiles are consecutive.
template <Deal kDeal>
__device__ __forceinline__ int TileAt(const SelParams& p, int position) {
  if constexpr (kDeal != Deal::kTokenWindows) {
    return position;
  } else {
    const int window = p.window_positions_divisor.Div(position);
    const int q = position - window * p.window_positions_divisor.divisor;
    const int row_tile = p.in_row_divisor.Div(q);
    const int group = window * p.in_row_div + (q - row_tile * p.in_row_div);
    return group * p.tiles_per_group + row_tile;
  }
}

// The positions one block owns: [first, last), balanced to within one position across blocks
// (the quotient and remainder of tiles / blocks come with the launch: no division at block
// start). Its groups start at first_group (with windows: its first window's first group).
struct BlockTiles {
  int first, last;
  int first_group;
  int first_window;  // windowed: also the input row of the window's slots
};

__device__ __forceinline__ uint32_t ClusterRank() {
  uint32_t rank;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// Every thread of the cluster's blocks arrives (relaxed: orders none of its writes) / waits.
__device__ __forceinline__ void ClusterArrive() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void ClusterWait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// kClusterKHalves' exchange at the kernel's end: rank 1's sums and out_scale reach rank 0's shared
// memory by st.async, counted in bytes on an mbarrier of rank 0's, so that no thread fences its
// memory or meets a cluster barrier there (a release arrive compiles to a GPU-scope membar:
// docs/PERF.md rows 110-111).
__device__ __forceinline__ uint32_t RankZeroAddress(const void* p) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, 0;\n" : "=r"(remote) : "r"(SharedAddress(p)));
  return remote;
}
__device__ __forceinline__ void InitExchangeBarrier(uint64_t* barrier) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(SharedAddress(barrier)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void ExpectExchangeBytes(uint64_t* barrier, uint32_t bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(SharedAddress(barrier)),
      "r"(bytes)
      : "memory");
}
__device__ __forceinline__ void WaitExchange(uint64_t* barrier) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(SharedAddress(barrier))
      : "memory");
}
// Stores at `to` (an address of this block's layout) in rank 0's shared memory, counted on rank
// 0's `barrier`.
__device__ __forceinline__ void SendToRankZero(float* to, const float (&v)[4], uint64_t* barrier) {
  const uint32_t at = RankZeroAddress(to), counter = RankZeroAddress(barrier);
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, "
      "[%5];\n" ::"r"(at),
      "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3]), "r"(counter)
      : "memory");
}
__device__ __forceinline__ void SendToRankZero(float* to, float v, uint64_t* barrier) {
  const uint32_t at = RankZeroAddress(to), counter = RankZeroAddress(barrier);
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0], %1, [%2];\n" ::"r"(at),
      "f"(v), "r"(counter)
      : "memory");
}

template <Deal kDeal>
__device__ __forceinline__ BlockTiles MyTiles(const SelParams& p) {
  // kClusterKHalves: the two blocks of a cluster (consecutive block indices) share a range.
  const int b = kDeal == Deal::kClusterKHalves ? blockIdx.x / 2 : blockIdx.x;
  const int first = b * p.tile_quotient + min(b, p.tile_remainder);
  const int last = first + p.tile_quotient + (b < p.tile_remainder ? 1 : 0);
  if constexpr (kDeal != Deal::kTokenWindows) {
    return {first, last, p.tiles_per_group_divisor.Div(first), 0};
  } else {
    const int first_window = p.window_positions_divisor.Div(first);
    return {first, last, first_window * p.in_row_div, first_window};
  }
}

// The part of K a block computes and stages: all of it, or (kClusterKHalves) its cluster rank's
// half, chunks [rank x chunks_per_split, ...). Its staged rows hold `units` units of 4 inputs
// from unit `first_unit` of each input row, in the layout of `chunks` chunks.
struct BlockK {
  int chunk_begin, chunk_end;
  int first_unit, units;
  int chunks;
};

template <Deal kDeal>
__device__ __forceinline__ BlockK MyK(const SelParams& p) {
  const int chunks = p.cols / kChunkElements;
  if constexpr (kDeal != Deal::kClusterKHalves) {
    return {0, chunks, 0, p.cols / 4, chunks};
  } else {
    const int begin = static_cast<int>(ClusterRank()) * p.chunks_per_split;
    const int end = min(chunks, begin + p.chunks_per_split);
    constexpr int kUnitsPerChunk = kChunkElements / 4;
    return {begin, end, begin * kUnitsPerChunk, (end - begin) * kUnitsPerChunk, p.chunks_per_split};
  }
}

// What a block needs of the groups its tiles touch, copied to shared memory before the codes
// start streaming: later lookups in global memory would wait behind the block's own code
// traffic (ncu: a quarter of the stall samples sat at block start and tile ends before this).
struct BlockGroups {
  int* expert;      // [groups_per_block]
  int* slot;        // [groups_per_block * staged_cols]: slot n of each group, -1 past its width
  float* global_a;  // [groups_per_block]
  float* global_b;  // [groups_per_block] (gate+up only)
};

__host__ __device__ inline int BlockGroupsWords(int groups_per_block, int staged_cols) {
  return groups_per_block * (3 + staged_cols);
}

__device__ __forceinline__ BlockGroups CarveBlockGroups(int* words, int groups_per_block) {
  return {words, words + 3 * groups_per_block, reinterpret_cast<float*>(words + groups_per_block),
          reinterpret_cast<float*>(words + 2 * groups_per_block)};
}

// A block's shared memory, in 16-byte vectors from its start: out_scale, row_max and row_input
// (staged_rows each) and the block's groups, then partial results (split plans; cluster halves:
// K half 1's sums, then its out_scale and the exchange's mbarrier), the zero row (per-slot plans),
// the staged rows, and the warps' rings from `rings` on. The kernel carves its memory and SmemBytes
// sizes it by this one function. The rings start on a 128-byte line: a ring stage is a whole number
// of lines, so each warp's 512-byte code copies fill 4 lines of shared memory, not 5 (docs/PERF.md
// row 66).
struct SmemCarve {
  int partials, zero, staged, rings;
};

// kClusterKHalves: where the exchange's mbarrier lies, in vectors past the partial sums.
__host__ __device__ inline int ExchangeBarrierOffset(int warps, int staged_rows) {
  return warps * kPartialFloatsPerWarp / 4 + (staged_rows + 3) / 4;
}

__host__ __device__ inline SmemCarve CarveSmem(bool one_slot, bool cluster_halves, int staged_rows,
                                               int groups_per_block, int staged_cols, int warps,
                                               int splits, const StagedLayout& layout) {
  const int partials = (3 * staged_rows + BlockGroupsWords(groups_per_block, staged_cols) + 3) / 4;
  const int partial_vectors = cluster_halves ? ExchangeBarrierOffset(warps, staged_rows) + 1
                                             : (splits > 1 ? warps * kPartialFloatsPerWarp / 4 : 0);
  const int zero = partials + partial_vectors;
  const int staged = zero + (one_slot ? layout.row_vectors : 0);
  return {partials, zero, staged, RoundUp8(staged + staged_rows * layout.row_vectors)};
}

// Stages the input rows of every group the block's tiles touch (row r: group first_group +
// r / staged_cols, slot column r % staged_cols). Each row is scaled by a power of two so its
// largest magnitude is below 2^14 (f16 has range for it; f32 precision survives in hi + lo);
// out_scale[r] undoes that and the 2^-14 of the code decode. Per-slot plans also zero the zero
// row that the non-owner threads read.
//
// The inputs are copied (cp.async, no registers, every copy of the block in flight at once)
// into the 16 bytes their f16 hi and lo parts will take, ahead of the codes' first passes
// (`issue_prologue`, kPrologueGroups commit groups) which would otherwise queue ahead of them;
// they go out after the group data's requests, which would otherwise queue behind them
// (measured: the union kernels lost 5% when a block that stages every input row copied them
// first), and where they need none of it (every input row staged) while it is in flight. The
// block's barrier before the input copies also orders the block's requests: every warp's inputs
// go out before any warp's code passes (docs/PERF.md rows 84 and 88: without that barrier, or
// with each warp starting on its own, the per-slot kernels were 0.4-1.5 us slower). Then one
// pass takes each row's largest magnitude and a second converts the units in place; the warps
// of a row meet on a barrier of their own between the two (kRowBarriers: down) or the block on
// its barriers (gate+up). Warps walk whole rows (RowWalk), so no unit needs a division by the
// row length and a row's maximum takes one warp reduction (ncu: on small and union launches
// per-unit divisions, a warp vote per unit and the inputs' load round trips made staging more
// than half of the kernel's time).

// Where unit u (elements 4u .. 4u + 3 of staged row r) goes: wider groups, one vector per unit
// (hi pair, hi pair, lo pair, lo pair); per-slot, half of a hi vector and half of a lo vector.
// Before the conversion the hi place holds elements 0 and 1 as f32, the lo place 2 and 3.
struct UnitPlace {
  uint2* hi;
  uint2* lo;
};

template <bool kOneSlot>
__device__ __forceinline__ UnitPlace PlaceOfUnit(uint4* staged, const StagedLayout& layout, int r,
                                                 int unit_in_row) {
  const int q = unit_in_row / (kChunkElements / 4), within = unit_in_row % (kChunkElements / 4);
  uint4* row_base = staged + r * layout.row_vectors;
  if (kOneSlot) {
    return {reinterpret_cast<uint2*>(row_base + OneSlotChunkOffset(q)) + within,
            reinterpret_cast<uint2*>(row_base + layout.lo_offset + OneSlotChunkOffset(q)) + within};
  }
  uint2* vector = reinterpret_cast<uint2*>(row_base + GroupChunkOffset(q) + within);
  return {vector, vector + 1};
}

// The power of two a staged row is scaled down by so that its largest magnitude (max) is below
// 2^14.
__device__ __forceinline__ int InputShift(float max) {
  int exponent = 0;
  frexpf(max, &exponent);  // max < 2^exponent
  return max > 0.0f ? exponent - 14 : 0;
}

// f16 hi and lo parts of two scaled inputs, element a in the low halves.
__device__ __forceinline__ void SplitHiLo(float a, float b, uint32_t& hi, uint32_t& lo) {
  const __half2 h = __floats2half2_rn(a, b);
  const float2 back = __half22float2(h);
  const __half2 l = __floats2half2_rn(a - back.x, b - back.y);
  hi = *reinterpret_cast<const uint32_t*>(&h);
  lo = *reinterpret_cast<const uint32_t*>(&l);
}

// How a warp walks the staged units: whole rows per warp (several warps share a row when there
// are more warps than staged rows), lanes on consecutive units of the row, so the row, its input
// row and its places are fixed across a warp's inner loop and a row's maximum needs one warp
// reduction. The partition is the launch's (for the plan's staged_rows, which no block
// exceeds), so a warp finds its part with one multiply-high.
struct RowWalk {
  int first_row, row_step;  // rows first_row, first_row + row_step, ... below the row count
  int first_unit, unit_step;
};

__device__ __forceinline__ RowWalk WarpRowWalk(const SelParams& p) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int first_row = p.walk_divisor.Div(warp);
  const int part = warp - first_row * p.walk_warps_per_row;
  return {first_row, p.walk_row_step, part * 32 + lane, p.walk_warps_per_row * 32};
}

// Copies the block's input units into their places, zeros for rows without an input row
// (row_input < 0; staged row r is input row r where row_input is null), as one commit group.
template <bool kOneSlot, Deal kDeal>
__device__ __forceinline__ void CopyInputs(const SelParams& p, uint4* staged,
                                           const StagedLayout& layout, const int* row_input,
                                           int rows, int first_group = 0) {
  const BlockK k = MyK<kDeal>(p);
  const int units_per_row = k.units;
  const RowWalk walk = WarpRowWalk(p);
  for (int r = walk.first_row; r < rows; r += walk.row_step) {
    // kEarlyConsecutive: group g serves slot g alone, so row r's input row is its group's.
    const int in_row = kDeal == Deal::kEarlyConsecutive ? p.in_row_divisor.Div(first_group + r)
                       : row_input == nullptr           ? r
                                                        : row_input[r];
    const float4* from =
        reinterpret_cast<const float4*>(p.in + int64_t{max(in_row, 0)} * p.cols) + k.first_unit;
    for (int col = walk.first_unit; col < units_per_row; col += walk.unit_step) {
      const UnitPlace place = PlaceOfUnit<kOneSlot>(staged, layout, r, col);
      if (kOneSlot) {
        CopyAsync8(place.hi, from + col, in_row >= 0);
        CopyAsync8(place.lo, reinterpret_cast<const float2*>(from + col) + 1, in_row >= 0);
      } else {
        CopyAsync16(place.hi, from + col, in_row >= 0);
      }
    }
  }
  CommitCopies();
}

// Copies what the block needs of its groups into bg: the slots (by staged row, from the slot
// table: one read, no slot_begin first) and the expert of each group. Each thread's first entry
// is requested, then `while_loading` runs, then the entry is stored.
template <typename WhileLoading>
__device__ __forceinline__ void ReadBlockGroups(const SelParams& p, const BlockTiles& bt,
                                                const BlockGroups& bg, int groups,
                                                WhileLoading&& while_loading) {
  const int entries = p.groups_per_block * p.staged_cols;
  // Entry t is slot n = t % staged_cols of the block's group `local` = t / staged_cols.
  auto request = [&](int t, int& local, int& slot, int& expert) {
    local = p.staged_cols_divisor.Div(t);
    const int group = bt.first_group + local;
    if (t >= entries || group >= groups) return false;
    slot = p.group_slot_table[int64_t{group} * p.staged_cols + (t - local * p.staged_cols)];
    expert = p.group_expert[group];
    return true;
  };
  auto store = [&](int t, int local, int slot, int expert) {
    bg.slot[t] = slot;
    if (t == local * p.staged_cols) bg.expert[local] = expert;
  };
  int local = 0, slot = 0, expert = 0;
  const bool first = request(threadIdx.x, local, slot, expert);
  while_loading();
  if (first) store(threadIdx.x, local, slot, expert);
  for (int t = threadIdx.x + blockDim.x; t < entries; t += blockDim.x) {
    if (request(t, local, slot, expert)) store(t, local, slot, expert);
  }
}

template <bool kOneSlot, Deal kDeal, int kPrologueGroups, bool kRowBarriers, typename Prologue>
__device__ void StageInputs(const SelParams& p, const BlockTiles& bt, const BlockGroups& bg,
                            uint4* staged, uint4* zero, float* out_scale, float* row_max,
                            int* row_input, Prologue&& issue_prologue) {
  const int groups = p.groups;
  int rows;
  if constexpr (kDeal != Deal::kTokenWindows) {
    const int last_group = min(groups, p.tiles_per_group_divisor.Div(bt.last - 1) + 1);
    rows = p.all_input_rows > 0 ? p.all_input_rows : (last_group - bt.first_group) * p.staged_cols;
  } else {  // one input row per window the block touches
    rows = p.window_positions_divisor.Div(bt.last - 1) - bt.first_window + 1;
  }
  const BlockK k = MyK<kDeal>(p);
  const StagedLayout layout = MakeStagedLayout(kOneSlot, k.chunks);
  const int units_per_row = k.units;
  // The group down, where its warps walk one row each and a lane's units fit kRegisterUnits, loads
  // each lane's units into registers (ld.global) where the other plans copy them to shared memory,
  // at the same place, and takes the row's maximum and its conversion from there in one pass: no
  // shared-memory round trip of the f32 inputs, no second read of them (docs/PERF.md rows
  // 147-148: the union-10 down 0.47 us faster; the cluster gate+up, whose rows meet on block
  // barriers, unchanged, so it keeps the copies).
  constexpr int kRegisterUnits = 8;
  const RowWalk first_walk = WarpRowWalk(p);
  const bool register_walk = !kOneSlot && kRowBarriers && rows <= first_walk.row_step &&
                             units_per_row <= kRegisterUnits * first_walk.unit_step;
  float4 units[kRegisterUnits];
  auto load_units = [&](const int* row_input_of) {
    const int r = first_walk.first_row;
    const int in_row = r >= rows ? -1 : row_input_of == nullptr ? r : row_input_of[r];
    const float4* from =
        reinterpret_cast<const float4*>(p.in + int64_t{max(in_row, 0)} * p.cols) + k.first_unit;
#pragma unroll
    for (int u = 0; u < kRegisterUnits; ++u) {
      const int col = first_walk.first_unit + u * first_walk.unit_step;
      units[u] = in_row >= 0 && col < units_per_row ? __ldg(from + col)
                                                    : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    CommitCopies();  // an empty group: the count WaitCopies keeps
  };
  // The group data goes out first; where the block stages every input row (which needs none of
  // it), the inputs' copies follow at once, so that their round trip overlaps the group data's
  // instead of queueing ahead of it.
  // kEarlyConsecutive: the global scales (asked for first: a load sent after the codes' passes
  // comes back behind them), the inputs and the prologue go out before the group data lands
  // (docs/PERF.md rows 94-99).
  float early_global_a = 0.0f, early_global_b = 0.0f;
  ReadBlockGroups(p, bt, bg, groups, [&] {
    if constexpr (kDeal == Deal::kEarlyConsecutive) {
      const int group = bt.first_group + static_cast<int>(threadIdx.x);
      if (static_cast<int>(threadIdx.x) < p.groups_per_block && group < groups) {
        const int expert = p.group_expert[group];
        early_global_a = p.global_a[expert];
        if (p.global_b != nullptr) early_global_b = p.global_b[expert];
      }
      CopyInputs<kOneSlot, kDeal>(p, staged, layout, nullptr, rows, bt.first_group);
      issue_prologue();
    } else {
      if (p.all_input_rows > 0) {
        if (register_walk) {
          load_units(nullptr);
        } else {
          CopyInputs<kOneSlot, kDeal>(p, staged, layout, nullptr, rows);
        }
      }
    }
  });
  __syncthreads();
  // The global scales, needed only when tiles are written, travel while the inputs are staged:
  // requested here, stored once the inputs' and the codes' copies are out.
  const int scale_group = threadIdx.x;
  const bool loads_scales =
      scale_group < p.groups_per_block && bt.first_group + scale_group < groups;
  float global_a = 0.0f, global_b = 0.0f;
  if (loads_scales) {
    if constexpr (kDeal == Deal::kEarlyConsecutive) {
      global_a = early_global_a;
      global_b = early_global_b;
    } else {
      const int expert = bg.expert[scale_group];
      global_a = p.global_a[expert];
      if (p.global_b != nullptr) global_b = p.global_b[expert];
    }
  }
  for (int r = threadIdx.x; r < rows; r += blockDim.x) {
    // The input row of staged row r (StagedRow), or -1 where a group is narrower than
    // staged_cols; where every input row is staged, staged row r is input row r.
    if (kDeal == Deal::kTokenWindows) {
      row_input[r] = bt.first_window + r;
    } else if (p.all_input_rows == 0) {
      row_input[r] = bg.slot[r] < 0 ? -1 : p.in_row_divisor.Div(bg.slot[r]);
    }
    row_max[r] = 0.0f;
  }
  if (kOneSlot) {
    for (int v = threadIdx.x; v < layout.row_vectors; v += blockDim.x) {
      zero[v] = make_uint4(0, 0, 0, 0);
    }
  }
  __syncthreads();
  if constexpr (kDeal != Deal::kEarlyConsecutive) {
    if (p.all_input_rows == 0) {
      if (register_walk) {
        load_units(row_input);
      } else {
        CopyInputs<kOneSlot, kDeal>(p, staged, layout, row_input, rows);
      }
    }
    issue_prologue();
  }
  if (loads_scales) {
    bg.global_a[scale_group] = global_a;
    bg.global_b[scale_group] = global_b;
  }
  for (int local = scale_group + blockDim.x;
       local < p.groups_per_block && bt.first_group + local < groups; local += blockDim.x) {
    const int expert = bg.expert[local];
    bg.global_a[local] = p.global_a[expert];
    if (p.global_b != nullptr) bg.global_b[local] = p.global_b[expert];
  }
  WaitCopies<kPrologueGroups>();  // this thread's inputs (the group before the prologue's) landed
  const RowWalk walk = WarpRowWalk(p);
  // A row's largest magnitude over the lanes of the warp walking it (non-negative floats order as
  // their bit patterns), and its units converted with the input scale.
  auto warp_row_max = [&](int r) {
    float m = 0.0f;
    if (register_walk) {
#pragma unroll
      for (int u = 0; u < kRegisterUnits; ++u) {
        m = fmaxf(m, fmaxf(fmaxf(fabsf(units[u].x), fabsf(units[u].y)),
                           fmaxf(fabsf(units[u].z), fabsf(units[u].w))));
      }
      return __reduce_max_sync(0xFFFFFFFFu, __float_as_uint(m));
    }
    for (int col = walk.first_unit; col < units_per_row; col += walk.unit_step) {
      const UnitPlace place = PlaceOfUnit<kOneSlot>(staged, layout, r, col);
      const uint2 xy = *place.hi, zw = *place.lo;
      m = fmaxf(m, fmaxf(fmaxf(fabsf(__uint_as_float(xy.x)), fabsf(__uint_as_float(xy.y))),
                         fmaxf(fabsf(__uint_as_float(zw.x)), fabsf(__uint_as_float(zw.y)))));
    }
    return __reduce_max_sync(0xFFFFFFFFu, __float_as_uint(m));
  };
  auto convert_row = [&](int r, float scale) {
    if (register_walk) {
#pragma unroll
      for (int u = 0; u < kRegisterUnits; ++u) {
        const int col = walk.first_unit + u * walk.unit_step;
        if (col >= units_per_row) break;
        const UnitPlace place = PlaceOfUnit<kOneSlot>(staged, layout, r, col);
        uint32_t hi[2], lo[2];
        SplitHiLo(units[u].x * scale, units[u].y * scale, hi[0], lo[0]);
        SplitHiLo(units[u].z * scale, units[u].w * scale, hi[1], lo[1]);
        *place.hi = make_uint2(hi[0], hi[1]);
        *place.lo = make_uint2(lo[0], lo[1]);
      }
      return;
    }
#pragma unroll 4
    for (int col = walk.first_unit; col < units_per_row; col += walk.unit_step) {
      const UnitPlace place = PlaceOfUnit<kOneSlot>(staged, layout, r, col);
      const uint2 xy = *place.hi, zw = *place.lo;
      uint32_t hi[2], lo[2];
      SplitHiLo(__uint_as_float(xy.x) * scale, __uint_as_float(xy.y) * scale, hi[0], lo[0]);
      SplitHiLo(__uint_as_float(zw.x) * scale, __uint_as_float(zw.y) * scale, hi[1], lo[1]);
      *place.hi = make_uint2(hi[0], hi[1]);
      *place.lo = make_uint2(lo[0], lo[1]);
    }
  };
  if constexpr (kRowBarriers) {
    // A row's maximum needs only the warps that walk it (walk_warps_per_row; then each has one
    // row: the launch's partition), which meet on a named barrier of their own (1 + r: at most 10
    // rows are shared), not the block's; a row walked by one warp needs none. Its lanes copied
    // the units they read, so no barrier waits for other warps' inputs (docs/PERF.md rows 82-83:
    // the union-10 down 0.27 us faster, the per-slot down 0.23; gate+up 0.05-0.15 us slower).
    const int sharing = p.walk_warps_per_row;
    for (int r = walk.first_row; r < rows; r += walk.row_step) {
      unsigned max_bits = warp_row_max(r);
      if (sharing > 1) {
        if (threadIdx.x % 32 == 0) atomicMax(reinterpret_cast<unsigned*>(row_max + r), max_bits);
        asm volatile("bar.sync %0, %1;" ::"r"(1 + r), "r"(32 * sharing) : "memory");
        max_bits = __float_as_uint(row_max[r]);
      }
      const int shift = InputShift(__uint_as_float(max_bits));
      if (walk.first_unit == 0) out_scale[r] = ldexpf(kSelDecodeScale, shift);
      convert_row(r, ldexpf(1.0f, -shift));
    }
  } else {  // the block's barriers: every row's maxima, then every row's scale
    __syncthreads();
    for (int r = walk.first_row; r < rows; r += walk.row_step) {
      const unsigned row_max_bits = warp_row_max(r);
      if (threadIdx.x % 32 == 0) atomicMax(reinterpret_cast<unsigned*>(row_max + r), row_max_bits);
    }
    __syncthreads();
    for (int r = threadIdx.x; r < rows; r += blockDim.x) {
      const int shift = InputShift(row_max[r]);
      out_scale[r] = ldexpf(kSelDecodeScale, shift);
      row_max[r] = ldexpf(1.0f, -shift);  // from here on: the input scale
    }
    __syncthreads();
    for (int r = walk.first_row; r < rows; r += walk.row_step) convert_row(r, row_max[r]);
  }
  __syncthreads();
}

// One work item of a warp: 16 weight rows (rows g and g + 8 of each lane group) of one tile,
// over chunks [chunk_begin, chunk_end) of K.
struct Item {
  int tile;
  int chunk_begin, chunk_end;
};

template <Deal kDeal>
__device__ __forceinline__ Item MakeItem(const SelParams& p, const BlockTiles& bt, int index) {
  if constexpr (kDeal == Deal::kClusterKHalves) {  // no split within the block: its K half
    const BlockK k = MyK<kDeal>(p);
    return {bt.first + index, k.chunk_begin, k.chunk_end};
  }
  const int chunks = p.cols / kChunkElements;
  const int tile_index = p.splits_divisor.Div(index);
  const int split = index - tile_index * p.splits;
  const int begin = split * p.chunks_per_split;
  return {TileAt<kDeal>(p, bt.first + tile_index), begin, min(chunks, begin + p.chunks_per_split)};
}

// The weight rows a lane reads for a tile (rows g and g + 8 of the mma tile).
template <bool kGateUpSilu>
__device__ __forceinline__ void TileRows(const SelParams& p, int tile, int g, int& group,
                                         int& out_row, int& row_g, int& row_g8) {
  group = p.tiles_per_group_divisor.Div(tile);
  const int row_tile = tile - group * p.tiles_per_group;
  if (kGateUpSilu) {  // gate row j and up row j
    out_row = row_tile * 8 + g;
    row_g = out_row;
    row_g8 = p.out_rows + out_row;
  } else {
    out_row = row_tile * 16 + g;
    row_g = out_row;
    row_g8 = out_row + 8;
  }
}

// Where a lane loads from: the octets (sel layout) holding code and scale rows g and g + 8 of
// its item.
struct LoadCursor {
  int index;  // item index within the block
  int q;      // first chunk of the current pass
  int chunk_end;
  const uint4* codes_g;
  const uint4* codes_g8;
  const uint16_t* scales_g;
  const uint16_t* scales_g8;
};

template <bool kGateUpSilu, Deal kDeal>
__device__ __forceinline__ LoadCursor StartLoad(const SelParams& p, const BlockTiles& bt,
                                                const int* expert_of, int index, int g) {
  const Item item = MakeItem<kDeal>(p, bt, index);
  int group, out_row, row_g, row_g8;
  TileRows<kGateUpSilu>(p, item.tile, g, group, out_row, row_g, row_g8);
  const int64_t expert = expert_of[group - bt.first_group];
  const int64_t octet_chunks = 8 * (p.cols / kChunkElements);
  const uint4* codes = reinterpret_cast<const uint4*>(p.codes + expert * p.expert_code_bytes);
  const uint16_t* scales =
      reinterpret_cast<const uint16_t*>(p.scales + expert * p.expert_scale_bytes);
  return {index,
          item.chunk_begin,
          item.chunk_end,
          codes + row_g / 8 * octet_chunks,
          codes + row_g8 / 8 * octet_chunks,
          scales + row_g / 8 * octet_chunks,
          scales + row_g8 / 8 * octet_chunks};
}

// Whether IssuePass's short path copies scale pairs 16 bytes per lane: for gate+up (2 chunks
// per thread, 128 bytes of pairs per row and pass). docs/PERF.md rows 26, 27 and 29: one lane's
// 4-byte word each (pairs of lanes the same word) cost a bench of the same reads 6%; 16-byte
// copies made the larger gate+up launches 3-6% faster, while in down (1 chunk per thread) the
// warp fences they need cost more than they saved.
template <int kChunks>
constexpr bool kWideScaleCopies = kChunks >= 2;

// One pass of one lane: chunks q + 4j + c of its two rows (row g of each octet).
template <int kChunks>
struct PassData {
  uint4 code_g[kChunks], code_g8[kChunks];
  uint32_t scale_g[kChunks], scale_g8[kChunks];
};

// Requests one pass into a ring stage: each lane its own code chunks. Chunks past the item's end
// arrive as zero codes and zero scales, so they add nothing.
//
// A pass whose chunks all lie in the item and in full quads (every pass of a row whose length
// is a multiple of 128, but the last of a split that ends mid-pass) takes the short path:
// lane 4g + c's chunk of each quad is entry `lane` of the quad's block, at fixed offsets. There
// a row's scale pairs for the pass are contiguous (64 bytes per quad): with WideScaleCopies the
// first 8 kChunks lanes copy both rows' pairs 16 bytes each, and lanes then read pairs that other
// lanes copied (the main loop fences the ring's reads and refills with __syncwarp). Otherwise
// each lane copies the 4-byte words holding its own pairs and reads back only what it copied.
template <int kChunks>
__device__ __forceinline__ void IssuePass(const LoadCursor& at, int chunks, int lane,
                                          uint8_t* stage) {
  const int g = lane / 4, c = lane % 4;
  uint4* codes = reinterpret_cast<uint4*>(stage);
  uint32_t* scales = reinterpret_cast<uint32_t*>(stage + kChunks * 2 * 32 * 16);
  if (at.q + 4 * kChunks <= at.chunk_end) {
    const int place = 8 * at.q + lane;
    const uint4* codes_g = at.codes_g + place;
    const uint4* codes_g8 = at.codes_g8 + place;
#pragma unroll
    for (int j = 0; j < kChunks; ++j) {
      CopyAsync16(codes + j * 32 + lane, codes_g + 32 * j, true);
      CopyAsync16(codes + (kChunks + j) * 32 + lane, codes_g8 + 32 * j, true);
    }
    if constexpr (kWideScaleCopies<kChunks>) {
      // 16-byte pieces of the rows' pairs 8q ... 8q + 32 kChunks - 1: row g, then row g + 8.
      constexpr int kPiecesPerRow = 4 * kChunks;
      if (lane < 2 * kPiecesPerRow) {
        const int piece = lane % kPiecesPerRow;
        const uint16_t* from = (lane < kPiecesPerRow ? at.scales_g : at.scales_g8) + 8 * at.q;
        CopyAsync16(reinterpret_cast<uint4*>(scales) + lane, from + 8 * piece, true);
      }
    } else {
      const uint16_t* scales_g = at.scales_g + (place & ~1);
      const uint16_t* scales_g8 = at.scales_g8 + (place & ~1);
#pragma unroll
      for (int j = 0; j < kChunks; ++j) {
        CopyAsync4(scales + j * 32 + lane, scales_g + 32 * j, true);
        CopyAsync4(scales + (kChunks + j) * 32 + lane, scales_g8 + 32 * j, true);
      }
    }
    return;
  }
#pragma unroll
  for (int j = 0; j < kChunks; ++j) {
    const int quad = at.q + 4 * j;
    const bool valid = quad + c < at.chunk_end;
    // SelChunkIndex: lane 4g + c of a full quad; rows closer together in a narrower last one.
    const int place = !valid               ? 0
                      : quad + 4 <= chunks ? 8 * quad + lane
                                           : 8 * quad + g * (chunks - quad) + c;
    CopyAsync16(codes + j * 32 + lane, at.codes_g + place, valid);
    CopyAsync16(codes + (kChunks + j) * 32 + lane, at.codes_g8 + place, valid);
    CopyAsync4(scales + j * 32 + lane, at.scales_g + (place & ~1), valid);
    CopyAsync4(scales + (kChunks + j) * 32 + lane, at.scales_g8 + (place & ~1), valid);
  }
}

// Reads one lane's pass back from its ring stage. kFull: every chunk of the pass lies in the
// item and in a full quad (IssuePass's short path), so the lane's chunks are at `lane` (and with
// WideScaleCopies its pairs at `lane` of each row's pairs).
template <int kChunks, bool kFull>
__device__ __forceinline__ PassData<kChunks> ReadPass(const uint8_t* stage, int q, int chunks,
                                                      int lane) {
  const int g = lane / 4, c = lane % 4;
  const uint4* codes = reinterpret_cast<const uint4*>(stage);
  const uint16_t* pairs = reinterpret_cast<const uint16_t*>(stage + kChunks * 2 * 32 * 16);
  PassData<kChunks> data;
#pragma unroll
  for (int j = 0; j < kChunks; ++j) {
    const int quad = q + 4 * j;
    const int place = kFull || quad + 4 <= chunks ? lane : g * max(1, chunks - quad) + c;
    data.code_g[j] = codes[j * 32 + lane];
    data.code_g8[j] = codes[(kChunks + j) * 32 + lane];
    if (kFull && kWideScaleCopies<kChunks>) {
      data.scale_g[j] = pairs[j * 32 + lane];
      data.scale_g8[j] = pairs[(kChunks + j) * 32 + lane];
    } else {
      // The copied words as pairs: a lane's pair is the half of its word its place's parity names.
      data.scale_g[j] = pairs[2 * (j * 32 + lane) + (place & 1)];
      data.scale_g8[j] = pairs[2 * ((kChunks + j) * 32 + lane) + (place & 1)];
    }
  }
  return data;
}

__device__ __forceinline__ uint32_t MulHalf2(uint32_t a, uint32_t b) {
  uint32_t out;
  asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(out) : "r"(a), "r"(b));
  return out;
}

// Multiplies one pass's chunks with the staged inputs and adds them into acc. Tensor-core f32
// accumulation truncates, so every chain into one accumulator is short (one 16-element block
// per-slot, one chunk otherwise) and chains are summed with ordinary f32 adds (docs/PERF.md).
//
// kOneSlot: B columns 2c and 2c + 1 hold the hi and lo parts of the input at the K positions
// of column thread c and are zero elsewhere, so column c's two D values are the hi and lo sums
// of c's own elements; the block scale is applied to them in f32 (acc[0]: row g, acc[1]: row
// g + 8, summed across the four column threads at the end). `b` points at this lane's hi row,
// lo row or the zero row.
// Otherwise: B column n is slot n of the group, and one mma's K mixes the chunks (and block
// scales) of all four column threads, so the weights are scaled before the mma: code * 2^-14 *
// e4m3 scale is exact in f16 (the smallest product, 0.5 * 2^-9 * 2^-14, is f16's 2^-24).
// acc[0..3] are D's rows g, g + 8 x columns 2c, 2c + 1, hi and lo in separate chains.
template <bool kOneSlot, int kChunks, bool kFull>
__device__ __forceinline__ void ComputePass(const PassData<kChunks>& data, const uint4* b, int q0,
                                            int chunk_end, int c, float (&acc)[4]) {
#pragma unroll
  for (int j = 0; j < kChunks; ++j) {
    // Past the item's end (codes and scales zero) any staged chunk will do: the item's last.
    const int q = kFull ? q0 + 4 * j + c : min(q0 + 4 * j + c, chunk_end - 1);
    const uint32_t words_g[4] = {data.code_g[j].x, data.code_g[j].y, data.code_g[j].z,
                                 data.code_g[j].w};
    const uint32_t words_g8[4] = {data.code_g8[j].x, data.code_g8[j].y, data.code_g8[j].z,
                                  data.code_g8[j].w};
    if (kOneSlot) {
      const float2 scales_g = ChunkScales(data.scale_g[j]);
      const float2 scales_g8 = ChunkScales(data.scale_g8[j]);
#pragma unroll
      for (int block = 0; block < 2; ++block) {
        float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int w = 2 * block; w < 2 * block + 2; ++w) {
          uint32_t ag[4], ag8[4];
          DecodeSelWord(words_g[w], ag);
          DecodeSelWord(words_g8[w], ag8);
          const uint4 bv = b[OneSlotChunkOffset(q) + w];
          Mma16816(d, ag[0], ag8[0], ag[1], ag8[1], bv.x, bv.y);
          Mma16816(d, ag[2], ag8[2], ag[3], ag8[3], bv.z, bv.w);
        }
        acc[0] = fmaf(d[0] + d[1], block == 0 ? scales_g.x : scales_g.y, acc[0]);
        acc[1] = fmaf(d[2] + d[3], block == 0 ? scales_g8.x : scales_g8.y, acc[1]);
      }
    } else {
      const uint32_t scales_g = ScalePairHalf2(data.scale_g[j]);
      const uint32_t scales_g8 = ScalePairHalf2(data.scale_g8[j]);
      float hi[4] = {0.0f, 0.0f, 0.0f, 0.0f}, lo[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        // Words 0-1 are block 0, words 2-3 block 1: broadcast that scale to both halves.
        const uint32_t sg = __byte_perm(scales_g, 0, w < 2 ? 0x1010 : 0x3232);
        const uint32_t sg8 = __byte_perm(scales_g8, 0, w < 2 ? 0x1010 : 0x3232);
        uint32_t ag[4], ag8[4];
        DecodeSelWord(words_g[w], ag);
        DecodeSelWord(words_g8[w], ag8);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          ag[i] = MulHalf2(ag[i], sg);
          ag8[i] = MulHalf2(ag8[i], sg8);
        }
        const uint4 even = b[GroupChunkOffset(q) + 2 * w];
        const uint4 odd = b[GroupChunkOffset(q) + 2 * w + 1];
        Mma16816(hi, ag[0], ag8[0], ag[1], ag8[1], even.x, even.y);
        Mma16816(lo, ag[0], ag8[0], ag[1], ag8[1], even.z, even.w);
        Mma16816(hi, ag[2], ag8[2], ag[3], ag8[3], odd.x, odd.y);
        Mma16816(lo, ag[2], ag8[2], ag[3], ag8[3], odd.z, odd.w);
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) acc[k] += hi[k] + lo[k];
    }
  }
}

// Where a lane computes: its item, pass and staged B row.
struct ComputeCursor {
  int index;
  int q;
  int chunk_end;
  const uint4* b;
  // Where the item's sums go, found at its start (below), each with the factor it takes there:
  // its staged row's out_scale x the group's global scale, as WriteTile forms it. Per-slot
  // (kOutputAtItemStart): row g at out (row g + 8 is 8 floats on), written by the lanes of
  // column 0. Group plans (kGroupOutputAtItemStart): columns 2c and 2c + 1 of lane (g, c), and
  // whether each is stored.
  float* out;
  float out_factor;
  float* group_out[2];
  float group_factor[2];
  bool group_store[2];
};

// The consecutive downs find their tiles' output places and factors when an item starts, while
// its first pass is in flight, so that the item's end only multiplies and stores: 0.05-0.15 us off
// the per-slot down, 0.09 off the union-10 down (docs/PERF.md rows 139-143). Gate+up has no
// registers to spare for it (row 70). The two forms are kept apart: one shared form compiled the
// per-slot down 0.7 us slower (row 144).
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal>
constexpr bool kOutputAtItemStart = !kGateUpSilu && kOneSlot && kDeal == Deal::kConsecutive;
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal>
constexpr bool kGroupOutputAtItemStart = !kGateUpSilu && !kOneSlot && kDeal == Deal::kConsecutive;

// The staged row of slot column n of a group: by input row when the block stages every input
// row, by window where it stages one row per window, else by the group's place in the block's
// range.
template <Deal kDeal>
__device__ __forceinline__ int StagedRow(const SelParams& p, const BlockTiles& bt,
                                         const BlockGroups& bg, int group, int n) {
  if constexpr (kDeal == Deal::kTokenWindows) {
    return p.in_row_divisor.Div(group) - bt.first_window;
  } else {
    const int t = (group - bt.first_group) * p.staged_cols + n;
    return p.all_input_rows > 0 ? p.in_row_divisor.Div(bg.slot[t]) : t;
  }
}

template <bool kGateUpSilu, bool kOneSlot, Deal kDeal, int kChunks>
__device__ __forceinline__ ComputeCursor StartCompute(const SelParams& p, const BlockTiles& bt,
                                                      const BlockGroups& bg, int index,
                                                      const uint4* staged, const uint4* zero,
                                                      const float* out_scale, int g, int c) {
  const Item item = MakeItem<kDeal>(p, bt, index);
  int group, out_row, row_g, row_g8;
  TileRows<kGateUpSilu>(p, item.tile, g, group, out_row, row_g, row_g8);
  const StagedLayout layout = MakeStagedLayout(kOneSlot, MyK<kDeal>(p).chunks);
  const uint4* b;
  if (kOneSlot) {
    const int staged_row = StagedRow<kDeal>(p, bt, bg, group, 0);
    const uint4* row = staged + staged_row * layout.row_vectors;
    b = g == 2 * c ? row : g == 2 * c + 1 ? row + layout.lo_offset : zero;
    if constexpr (kOutputAtItemStart<kGateUpSilu, kOneSlot, kDeal>) {
      const int local = group - bt.first_group;
      const int slot = bg.slot[local * p.staged_cols];
      return {index, item.chunk_begin, item.chunk_end, b,
              p.out + int64_t{slot} * p.out_rows + out_row,
              out_scale[staged_row] * bg.global_a[local]};
    }
  } else {
    // Columns past the group's width read slot 0's row; they are computed and never written.
    const bool in_group =
        g < p.staged_cols && bg.slot[(group - bt.first_group) * p.staged_cols + g] >= 0;
    b = staged + StagedRow<kDeal>(p, bt, bg, group, in_group ? g : 0) * layout.row_vectors;
    // kClusterKHalves: the staged rows start at the block's first chunk, ComputePass addresses
    // them by chunk of K.
    if (kDeal == Deal::kClusterKHalves) b -= GroupChunkOffset(item.chunk_begin);
    if constexpr (kGroupOutputAtItemStart<kGateUpSilu, kOneSlot, kDeal>) {
      // WriteTile's lookups, both columns side by side; a column past the group's width takes
      // column 0's place and is not stored.
      ComputeCursor at{index, item.chunk_begin, item.chunk_end, b, nullptr, 0.0f};
      const int local = group - bt.first_group;
#pragma unroll
      for (int parity = 0; parity < 2; ++parity) {
        const int n = 2 * c + parity;
        const bool store = n < p.staged_cols && bg.slot[local * p.staged_cols + n] >= 0;
        const int column = store ? n : 0;
        const int slot = bg.slot[local * p.staged_cols + column];
        const int row = StagedRow<kDeal>(p, bt, bg, group, column);
        at.group_out[parity] = p.out + int64_t{slot} * p.out_rows + out_row;
        at.group_factor[parity] = out_scale[row] * bg.global_a[local];
        at.group_store[parity] = store;
      }
      return at;
    }
  }
  return {index, item.chunk_begin, item.chunk_end, b, nullptr, 0.0f};
}

// Writes one tile's results. kOneSlot: every lane holds the sums of all K (after the column
// reduction) for rows g and g + 8; lanes of column 0 write. Otherwise lane (g, c) holds rows
// g, g + 8 x columns 2c, 2c + 1. kClusterKHalves (group plans only): acc holds K half 0, and
// peer_acc and peer_scale the lane's sums of K half 1 and that block's out_scale.
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal>
__device__ __forceinline__ void WriteTile(const SelParams& p, const BlockTiles& bt,
                                          const BlockGroups& bg, int tile, const float* out_scale,
                                          const float (&acc)[4], int g, int c,
                                          const float* peer_acc = nullptr,
                                          const float* peer_scale = nullptr) {
  static_assert(kDeal != Deal::kClusterKHalves || !kOneSlot);
  int group, out_row, row_g, row_g8;
  TileRows<kGateUpSilu>(p, tile, g, group, out_row, row_g, row_g8);
  const int local = group - bt.first_group;
#pragma unroll
  for (int parity = 0; parity < 2; ++parity) {
    if (kOneSlot && (c != 0 || parity != 0)) continue;
    // Group plans compute both columns with no branch between them, so that their lookups and
    // math overlap; a column past the group's width computes column 0's and is not stored.
    const int n = kOneSlot ? 0 : 2 * c + parity;
    const bool store = kOneSlot || (n < p.staged_cols && bg.slot[local * p.staged_cols + n] >= 0);
    const int column = store ? n : 0;
    float v_g = kOneSlot ? acc[0] : acc[parity];
    float v_g8 = kOneSlot ? acc[1] : acc[2 + parity];
    const int slot = bg.slot[local * p.staged_cols + column];
    const int row = StagedRow<kDeal>(p, bt, bg, group, column);
    float scale = out_scale[row];
    if constexpr (kDeal == Deal::kClusterKHalves) {  // K half 1's sums, in their own input scale
      v_g = v_g * scale + peer_acc[parity] * peer_scale[row];
      v_g8 = v_g8 * scale + peer_acc[2 + parity] * peer_scale[row];
      scale = 1.0f;
    }
    float* out = p.out + int64_t{slot} * p.out_rows + out_row;
    if (kGateUpSilu) {
      const float gate = v_g * scale * bg.global_a[local];
      const float up = v_g8 * scale * bg.global_b[local];
      // The cluster K halves compute their SiLU on the launch's last chain, after the exchange:
      // there by __expf and __fdividef (2 + 1.2 |gate| and 2 ulp, far inside the checks' 1e-3
      // and 1e-5), 0.2-0.3 us faster than the IEEE forms; inside the other kernels' loops the
      // fast forms were slower (docs/PERF.md rows 122-124).
      const float value = kDeal == Deal::kClusterKHalves
                              ? __fdividef(gate, 1.0f + __expf(-gate)) * up
                              : gate / (1.0f + expf(-gate)) * up;
      if (store) out[0] = value;
    } else {
      const float global = scale * bg.global_a[local];
      if (store) {
        out[0] = v_g * global;
        out[8] = v_g8 * global;
      }
    }
  }
}

// Per-slot: the four column threads of a lane group hold partial sums over their own chunks.
__device__ __forceinline__ void SumColumnThreads(float (&acc)[4]) {
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    acc[k] += __shfl_xor_sync(0xFFFFFFFFu, acc[k], 1);
    acc[k] += __shfl_xor_sync(0xFFFFFFFFu, acc[k], 2);
  }
}

// A persistent block of warps streams a contiguous range of tiles: item i of the block (tile
// first + i / splits, K split i % splits) belongs to warp i % warps. A warp's items form one
// software pipeline through its ring of kStages passes: while one pass is computed the next
// kStages - 1 are in flight, across tile boundaries too; the first kPassesBeforeStaging are
// requested before the inputs are staged, the others after.
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal>
__global__ void __launch_bounds__(kMaxWarps * 32, 1) SelNvfp4Kernel(SelParams p) {
  constexpr int kChunks = Tuning<kGateUpSilu, kOneSlot>::kChunksPerThread;
  constexpr int kChunksPerPass = Tuning<kGateUpSilu, kOneSlot>::kChunksPerPass;
  constexpr int kStages = Tuning<kGateUpSilu, kOneSlot>::kStages;
  extern __shared__ uint4 smem[];
  const int warps = blockDim.x / 32;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, c = lane % 4;
  // Layout: CarveSmem.
  float* out_scale = reinterpret_cast<float*>(smem);
  float* row_max = out_scale + p.staged_rows;
  int* row_input = reinterpret_cast<int*>(row_max + p.staged_rows);
  const BlockGroups bg = CarveBlockGroups(row_input + p.staged_rows, p.groups_per_block);
  const StagedLayout layout = MakeStagedLayout(kOneSlot, MyK<kDeal>(p).chunks);
  const SmemCarve carve = CarveSmem(kOneSlot, kDeal == Deal::kClusterKHalves, p.staged_rows,
                                    p.groups_per_block, p.staged_cols, warps, p.splits, layout);
  float* partials = reinterpret_cast<float*>(smem + carve.partials);
  uint4* zero = smem + carve.zero;
  uint4* staged = smem + carve.staged;
  uint8_t* ring =
      reinterpret_cast<uint8_t*>(smem + carve.rings) + warp * kStages * StageBytes(kChunks);

  // The blocks of a cluster arrive now and wait before rank 1 writes into rank 0's shared
  // memory, which therefore exists, its exchange barrier initialised, by then. (The barrier's
  // address is computed where it is used: kept live through the loop it spills a register.)
  auto exchange_barrier = [&] {
    return reinterpret_cast<uint64_t*>(reinterpret_cast<uint4*>(partials) +
                                       ExchangeBarrierOffset(warps, p.staged_rows));
  };
  if constexpr (kDeal == Deal::kClusterKHalves) {
    if (threadIdx.x == 0) InitExchangeBarrier(exchange_barrier());
    ClusterArrive();
  }
  const BlockTiles bt = MyTiles<kDeal>(p);
  const int chunks = p.cols / kChunkElements;
  const int items = (bt.last - bt.first) * p.splits;

  // The load cursor runs kStages - 1 passes ahead of the compute cursor. Every step commits
  // one copy group, empty past the end, so that "all but the newest kStages - 1 groups are
  // done" always means "the pass about to be computed has landed".
  LoadCursor load{};
  bool loading = warp < items;
  auto issue_next = [&](int stage) {
    if (loading) {
      IssuePass<kChunks>(load, chunks, lane, ring + stage * StageBytes(kChunks));
      if (load.q + kChunksPerPass < load.chunk_end) {
        load.q += kChunksPerPass;
      } else if (load.index + warps < items) {
        load = StartLoad<kGateUpSilu, kDeal>(p, bt, bg.expert, load.index + warps, g);
      } else {
        loading = false;
      }
    }
    CommitCopies();
  };
  // The cluster K halves' gate+up warps (one item of a few passes each: a start-bound launch)
  // request one pass before the staging: a second delays the staging more than it feeds the loop
  // (docs/PERF.md rows 80-81: the union-10 gate+up 0.3-0.4 us faster with one, 0.25 with none).
  constexpr int kEarly = kDeal == Deal::kClusterKHalves && kGateUpSilu
                             ? 1
                             : Tuning<kGateUpSilu, kOneSlot>::kPassesBeforeStaging;
  // Down stages with per-row barriers, gate+up with the block's (StageInputs says why).
  StageInputs<kOneSlot, kDeal, kEarly, !kGateUpSilu>(
      p, bt, bg, staged, zero, out_scale, row_max, row_input, [&] {
        if (loading) {  // kEarlyConsecutive: the first expert from global memory
          load = StartLoad<kGateUpSilu, kDeal>(
              p, bt, kDeal == Deal::kEarlyConsecutive ? p.group_expert + bt.first_group : bg.expert,
              warp, g);
        }
        for (int stage = 0; stage < kEarly; ++stage) issue_next(stage);
      });
  for (int stage = kEarly; stage < kStages - 1; ++stage) issue_next(stage);

  // Where a computed stage is refilled: right after its compute, so that an item's end (its sums,
  // lookups and stores) does not hold the request back, or at the top of the next iteration. The
  // same requests in the same order either way; each kernel takes the place measured faster for
  // it (docs/PERF.md rows 70, 76 and 77: after the compute 0.1-0.3 us faster for gate+up and the
  // union down, but slower for the cluster halves and, at t = 8 and 256 / 4096, the per-slot down).
  constexpr bool kRefillAfterCompute = kDeal != Deal::kClusterKHalves && (kGateUpSilu || !kOneSlot);
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  if (warp < items) {
    ComputeCursor at =
        StartCompute<kGateUpSilu, kOneSlot, kDeal, kChunks>(p, bt, bg, warp, staged, zero,
                                                            out_scale, g, c);
    if (kRefillAfterCompute) issue_next(kStages - 1);  // the ring's last stage, still free
    for (int stage = 0;; stage = stage + 1 == kStages ? 0 : stage + 1) {
      if (!kRefillAfterCompute) {
        // The ring stage before this one is free again (with WideScaleCopies: once every lane
        // has read it): refill it.
        if (kWideScaleCopies<kChunks>) __syncwarp();
        issue_next(stage == 0 ? kStages - 1 : stage - 1);
      }
      WaitCopies<kStages - 1>();  // all but the newest kStages - 1 groups: this pass landed
      if (kWideScaleCopies<kChunks>) __syncwarp();  // ... for every lane
      // Passes wholly inside the item (all but an item's last, where K is not a multiple of a
      // pass) take the path without clamps and selects.
      const uint8_t* from = ring + stage * StageBytes(kChunks);
      if (at.q + kChunksPerPass <= at.chunk_end) {
        ComputePass<kOneSlot, kChunks, true>(ReadPass<kChunks, true>(from, at.q, chunks, lane),
                                             at.b, at.q, at.chunk_end, c, acc);
      } else {
        ComputePass<kOneSlot, kChunks, false>(ReadPass<kChunks, false>(from, at.q, chunks, lane),
                                              at.b, at.q, at.chunk_end, c, acc);
      }
      if (kRefillAfterCompute) {  // this stage is free again (WideScaleCopies: once all have read)
        if (kWideScaleCopies<kChunks>) __syncwarp();
        issue_next(stage);
      }
      if (at.q + kChunksPerPass < at.chunk_end) {
        at.q += kChunksPerPass;
        continue;
      }
      // The item is done: write its tile, or (split plans) leave its partial sums.
      if (kOneSlot) SumColumnThreads(acc);
      if (kDeal == Deal::kClusterKHalves) break;  // one item per warp, its sums kept in acc
      if (kOutputAtItemStart<kGateUpSilu, kOneSlot, kDeal> && p.splits == 1) {
        if (c == 0) {
          at.out[0] = acc[0] * at.out_factor;
          at.out[8] = acc[1] * at.out_factor;
        }
      } else if (kGroupOutputAtItemStart<kGateUpSilu, kOneSlot, kDeal> && p.splits == 1) {
#pragma unroll
        for (int parity = 0; parity < 2; ++parity) {
          if (at.group_store[parity]) {
            at.group_out[parity][0] = acc[parity] * at.group_factor[parity];
            at.group_out[parity][8] = acc[2 + parity] * at.group_factor[parity];
          }
        }
      } else if (p.splits == 1) {
        WriteTile<kGateUpSilu, kOneSlot, kDeal>(p, bt, bg, TileAt<kDeal>(p, bt.first + at.index),
                                                out_scale, acc, g, c);
      } else {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          partials[warp * kPartialFloatsPerWarp + 4 * lane + k] = acc[k];
        }
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) acc[k] = 0.0f;
      if (at.index + warps >= items) break;
      at = StartCompute<kGateUpSilu, kOneSlot, kDeal, kChunks>(p, bt, bg, at.index + warps, staged,
                                                               zero, out_scale, g, c);
    }
  }
  WaitCopies<0>();
  if constexpr (kDeal == Deal::kClusterKHalves) {
    // Rank 1 sends its sums and its rows' out_scale to rank 0 and leaves; rank 0's warps wait for
    // the bytes, add them to their own and write the tiles.
    float* peer_scale = partials + warps * kPartialFloatsPerWarp;
    uint64_t* exchange = exchange_barrier();
    ClusterWait();
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
      WaitExchange(exchange);
      float peer[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) peer[k] = partials[warp * kPartialFloatsPerWarp + 4 * lane + k];
      WriteTile<kGateUpSilu, kOneSlot, kDeal>(p, bt, bg, bt.first + warp, out_scale, acc, g, c,
                                              peer, peer_scale);
    }
    return;
  }
  if (p.splits == 1) return;

  // Split plans have one item per warp: warps i .. i + splits - 1 hold the splits of one tile;
  // the first adds the others' partial sums in split order and writes the tile.
  __syncthreads();
  const int tile_index = p.splits_divisor.Div(warp);
  if (warp >= items || warp != tile_index * p.splits) return;
  const int tile = TileAt<kDeal>(p, bt.first + tile_index);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    float sum = 0.0f;
    for (int s = 0; s < p.splits; ++s) {
      sum += partials[(warp + s) * kPartialFloatsPerWarp + 4 * lane + k];
    }
    acc[k] = sum;
  }
  WriteTile<kGateUpSilu, kOneSlot, kDeal>(p, bt, bg, tile, out_scale, acc, g, c);
}

// Groups (windows) a range of `positions` consecutive tiles (positions) can touch.
int Spanned(int positions, int positions_per_group) {
  return (positions + positions_per_group - 2) / positions_per_group + 1;
}

// kClusterKHalves: room for K half 1's sums (partials) and its out_scale.
int64_t SmemBytes(bool one_slot, int cols, int staged_rows, int groups_per_block, int staged_cols,
                  int warps, int splits, int stages, int chunks_per_thread,
                  bool cluster_halves = false) {
  const StagedLayout layout = MakeStagedLayout(one_slot, cols / kChunkElements);
  const SmemCarve carve = CarveSmem(one_slot, cluster_halves, staged_rows, groups_per_block,
                                    staged_cols, warps, splits, layout);
  return 16 * int64_t{carve.rings} + int64_t{warps} * stages * StageBytes(chunks_per_thread);
}

// Sizes the grid to the card: one block per SM while its shared memory fits, as many warps as
// the block's tiles need in whole rounds (so the last round is nearly full), and where there
// are fewer tiles than a block has warps to spare each tile's K split across warps so that
// every SM still streams with many warps. With token windows of window_groups groups (TileAt;
// 0: none) a block stages one input row per window it touches.
absl::StatusOr<LaunchPlan> PlanLaunch(bool one_slot, int tiles, int tiles_per_group, int cols,
                                      int per_thread, int stages, int staged_cols, int input_rows,
                                      int sms, int window_groups) {
  const int chunks = cols / kChunkElements;
  const int chunks_per_pass = 4 * per_thread;
  const int passes = (chunks + chunks_per_pass - 1) / chunks_per_pass;
  for (int blocks = std::min(sms, tiles); blocks <= tiles; blocks = std::min(tiles, 2 * blocks)) {
    const int per_block = (tiles + blocks - 1) / blocks;
    const int most_splits =
        per_block * 2 <= kMaxWarps ? std::min({kMaxWarps / per_block, passes, kMaxSplits}) : 1;
    // Where the warps' rings would not fit beside the inputs: fewer K splits (fewer warps), then
    // more rounds, before more blocks (each of which stages its inputs again: docs/PERF.md row 56).
    for (int wanted_splits = most_splits; wanted_splits >= 1; --wanted_splits) {
      LaunchPlan plan;
      plan.blocks = blocks;
      const int passes_per_split = (passes + wanted_splits - 1) / wanted_splits;
      const int splits = (passes + passes_per_split - 1) / passes_per_split;
      plan.splits = splits;
      plan.chunks_per_split = passes_per_split * chunks_per_pass;
      if (window_groups > 0) {
        const int windows =
            std::min(input_rows, Spanned(per_block, window_groups * tiles_per_group));
        plan.groups_per_block = windows * window_groups;
        plan.staged_rows = windows;
      } else {
        plan.groups_per_block = Spanned(per_block, tiles_per_group);
        plan.staged_rows = plan.groups_per_block * staged_cols;
        plan.all_input_rows = input_rows < plan.staged_rows;
        if (plan.all_input_rows) plan.staged_rows = input_rows;
      }
      for (int rounds = (per_block + kMaxWarps - 1) / kMaxWarps; rounds <= per_block; ++rounds) {
        plan.warps = splits > 1 ? per_block * splits : (per_block + rounds - 1) / rounds;
        plan.smem_bytes = SmemBytes(one_slot, cols, plan.staged_rows, plan.groups_per_block,
                                    staged_cols, plan.warps, plan.splits, stages, per_thread);
        if (plan.smem_bytes <= kMaxDynamicSmemBytes) return plan;
        if (splits > 1) break;
      }
    }
    if (blocks == tiles) break;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "sel kernels: %d inputs x %d slots per group do not fit the %d KiB of shared memory "
      "the kernels stage inputs in",
      cols, staged_cols, kMaxDynamicSmemBytes / 1024));
}

// kClusterKHalves for a group plan which, dealt consecutively at one block per SM, would have
// every block stage every input row and split each tile's K across warps, so that every block
// converts whole input rows for a share of K (the union kernels at small unions: docs/PERF.md
// rows 51, 54 and 56): clusters of two blocks take one range of tiles each, sms / 2 ranges, and
// block rank h stages and computes K half h with one warp per tile. None where ClusterKHalvesPay
// says they do not pay, the card's SMs are odd, a range has more tiles than a block has warps, or
// the blocks' shared memory does not hold it.
std::optional<LaunchPlan> PlanClusterHalves(int tiles, int tiles_per_group, int cols,
                                            int per_thread, int stages, int staged_cols,
                                            int input_rows, int sms) {
  const int chunks_per_pass = 4 * per_thread;
  const int passes = (cols / kChunkElements + chunks_per_pass - 1) / chunks_per_pass;
  const int per_sm = (tiles + sms - 1) / sms;
  const bool splits_k = per_sm * 2 <= kMaxWarps && passes >= 2;
  const bool stages_every_row = input_rows < Spanned(per_sm, tiles_per_group) * staged_cols;
  const int ranges = sms / 2;
  const int per_block = (tiles + ranges - 1) / ranges;
  if (sms % 2 != 0 || tiles < sms || !splits_k || !stages_every_row ||
      !ClusterKHalvesPay(input_rows, cols) || per_block > kMaxWarps) {
    return std::nullopt;
  }
  LaunchPlan plan;
  plan.blocks = sms;
  plan.warps = per_block;
  plan.chunks_per_split = (passes + 1) / 2 * chunks_per_pass;
  plan.groups_per_block = Spanned(per_block, tiles_per_group);
  plan.staged_rows = input_rows;
  plan.all_input_rows = true;
  plan.smem_bytes =
      SmemBytes(false, plan.chunks_per_split * kChunkElements, plan.staged_rows,
                plan.groups_per_block, staged_cols, plan.warps, 1, stages, per_thread, true);
  if (plan.smem_bytes > kMaxDynamicSmemBytes) return std::nullopt;
  return plan;
}

// A launch of clusters of two blocks (kClusterKHalves); `attribute` must outlive the config's use.
cudaLaunchConfig_t ClusterOfTwoConfig(int blocks, int threads, size_t smem_bytes,
                                      cudaStream_t stream, cudaLaunchAttribute& attribute) {
  attribute = {};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim = {2, 1, 1};
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = smem_bytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return config;
}

struct DeviceLimits {
  int sms = 0;
  int64_t l2_bytes = 0;
  int clusters_of_two = 0;  // kClusterKHalves instantiations: clusters of 2 blocks that fit at once
};

// The card's SM count and L2 size (and for kClusterKHalves how many clusters of two of the
// largest blocks fit), and the kernel's shared-memory limit raised, once per device.
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal>
absl::StatusOr<DeviceLimits> PrepareDevice() {
  static std::mutex mu;
  static std::vector<DeviceLimits> limits_by_device;
  int device = 0;
  CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mu);
  if (device >= static_cast<int>(limits_by_device.size())) limits_by_device.resize(device + 1);
  DeviceLimits& limits = limits_by_device[device];
  if (limits.sms == 0) {
    const auto kernel = SelNvfp4Kernel<kGateUpSilu, kOneSlot, kDeal>;
    CUDA_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              kMaxDynamicSmemBytes));
    int sms = 0, l2_bytes = 0, clusters = 0;
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    if (kDeal == Deal::kClusterKHalves) {
      cudaLaunchAttribute cluster;
      const cudaLaunchConfig_t config =
          ClusterOfTwoConfig(sms, kMaxWarps * 32, kMaxDynamicSmemBytes, nullptr, cluster);
      CUDA_RETURN_IF_ERROR(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    }
    limits = {sms, l2_bytes, clusters};
  }
  return limits;
}

// Fills in p's plan-dependent fields and launches.
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal>
absl::Status Launch(SelParams p, const LaunchPlan& plan, int input_rows, cudaStream_t stream) {
  RETURN_IF_ERROR((PrepareDevice<kGateUpSilu, kOneSlot, kDeal>().status()));
  const int ranges = kDeal == Deal::kClusterKHalves ? plan.blocks / 2 : plan.blocks;
  p.tile_quotient = p.tiles / ranges;
  p.tile_remainder = p.tiles % ranges;
  p.splits = plan.splits;
  p.splits_divisor = FastDivisor::Of(plan.splits);
  p.tiles_per_group_divisor = FastDivisor::Of(p.tiles_per_group);
  p.in_row_divisor = FastDivisor::Of(p.in_row_div);
  p.staged_cols_divisor = FastDivisor::Of(p.staged_cols);
  p.window_positions_divisor =
      FastDivisor::Of(kDeal == Deal::kTokenWindows ? p.in_row_div * p.tiles_per_group : 1);
  p.chunks_per_split = plan.chunks_per_split;
  p.staged_rows = plan.staged_rows;
  p.groups_per_block = plan.groups_per_block;
  p.all_input_rows = plan.all_input_rows ? input_rows : 0;
  p.walk_warps_per_row = std::max(1, plan.warps / plan.staged_rows);
  p.walk_row_step = plan.warps / p.walk_warps_per_row;
  p.walk_divisor = FastDivisor::Of(p.walk_warps_per_row);
  if constexpr (kDeal == Deal::kClusterKHalves) {
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t config =
        ClusterOfTwoConfig(plan.blocks, plan.warps * 32, plan.smem_bytes, stream, cluster);
    CUDA_RETURN_IF_ERROR(
        cudaLaunchKernelEx(&config, SelNvfp4Kernel<kGateUpSilu, kOneSlot, kDeal>, p));
  } else {
    SelNvfp4Kernel<kGateUpSilu, kOneSlot, kDeal>
        <<<plan.blocks, plan.warps * 32, plan.smem_bytes, stream>>>(p);
  }
  CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

// Plans the launch and picks the kernel's deal: token windows where TokenWindowsPay (per-slot
// gate+up), cluster K halves where PlanClusterHalves finds a plan and the card holds it
// (group plans), consecutive tiles otherwise.
template <bool kGateUpSilu>
absl::Status LaunchEither(SelParams p, const DeviceSlotGroups& groups, int input_rows,
                          cudaStream_t stream) {
  constexpr int kPerThread = Tuning<kGateUpSilu, true>::kChunksPerThread;
  static_assert(kPerThread == Tuning<kGateUpSilu, false>::kChunksPerThread);
  p.groups = groups.groups;
  p.tiles = groups.groups * p.tiles_per_group;
  const bool one_slot = groups.max_group_slots == 1;
  const int stages =
      one_slot ? Tuning<kGateUpSilu, true>::kStages : Tuning<kGateUpSilu, false>::kStages;
  ASSIGN_OR_RETURN(const DeviceLimits limits,
                   (PrepareDevice<kGateUpSilu, false, Deal::kConsecutive>()));
  bool windows = false;
  const int64_t distinct_expert_bytes =
      int64_t{groups.distinct_experts} * (p.expert_code_bytes + p.expert_scale_bytes);
  if (kGateUpSilu && one_slot) {
    windows = TokenWindowsPay({.groups = groups.groups,
                               .selected = p.in_row_div,
                               .slots_are_groups = groups.slots_are_groups,
                               .tiles_per_group = p.tiles_per_group,
                               .sms = limits.sms,
                               .distinct_expert_bytes = distinct_expert_bytes,
                               .l2_bytes = limits.l2_bytes});
  }
  if (!one_slot) {
    if (const std::optional<LaunchPlan> halves =
            PlanClusterHalves(p.tiles, p.tiles_per_group, p.cols, kPerThread, stages, p.staged_cols,
                              input_rows, limits.sms)) {
      ASSIGN_OR_RETURN(const DeviceLimits cluster_limits,
                       (PrepareDevice<kGateUpSilu, false, Deal::kClusterKHalves>()));
      if (2 * cluster_limits.clusters_of_two >= halves->blocks) {
        return Launch<kGateUpSilu, false, Deal::kClusterKHalves>(p, *halves, input_rows, stream);
      }
    }
  }
  ASSIGN_OR_RETURN(const LaunchPlan plan,
                   PlanLaunch(one_slot, p.tiles, p.tiles_per_group, p.cols, kPerThread, stages,
                              p.staged_cols, input_rows, limits.sms, windows ? p.in_row_div : 0));
  if (one_slot) {
    if constexpr (kGateUpSilu) {
      if (windows) return Launch<true, true, Deal::kTokenWindows>(p, plan, input_rows, stream);
      if (EarlyStartPays(groups.slots_are_groups, plan.all_input_rows, distinct_expert_bytes,
                         limits.l2_bytes)) {
        return Launch<true, true, Deal::kEarlyConsecutive>(p, plan, input_rows, stream);
      }
    }
    return Launch<kGateUpSilu, true, Deal::kConsecutive>(p, plan, input_rows, stream);
  }
  return Launch<kGateUpSilu, false, Deal::kConsecutive>(p, plan, input_rows, stream);
}

absl::Status CheckGroups(const DeviceSlotGroups& groups) {
  if (groups.groups < 1 || groups.slots_total < groups.groups) {
    return absl::InvalidArgumentError(
        absl::StrFormat("groups: %d groups of %d slots; at least 1 group, and a slot each",
                        groups.groups, groups.slots_total));
  }
  if (groups.max_group_slots < 1 || groups.max_group_slots > kMaxGroupSlots) {
    return absl::InvalidArgumentError(absl::StrFormat("max_group_slots: %d is outside [1, %d]",
                                                      groups.max_group_slots, kMaxGroupSlots));
  }
  if (groups.expert == nullptr || groups.slot_table == nullptr) {
    return absl::InvalidArgumentError("groups: null device pointer");
  }
  return absl::OkStatus();
}

absl::Status CheckBank(const char* name, const DeviceNvfp4Bank& bank) {
  if (bank.codes == nullptr || bank.scales == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: null device pointer", name));
  }
  if (bank.cols % kChunkElements != 0 || bank.cols < kChunkElements || bank.rows < 16) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d x %d rows x cols; cols must be a positive multiple of 32, rows at least 16", name,
        bank.rows, bank.cols));
  }
  // The kernels copy codes and scales 16 bytes at a time.
  if (reinterpret_cast<uintptr_t>(bank.codes) % 16 != 0 ||
      reinterpret_cast<uintptr_t>(bank.scales) % 16 != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: codes and scales must be 16-byte aligned", name));
  }
  return absl::OkStatus();
}

// One thread per (expert, row, chunk): its 16 code bytes, bit-permuted, and its 2 scale bytes,
// to their sel-layout places.
__global__ void ToSelLayoutKernel(DeviceNvfp4Bank checkpoint, uint8_t* sel_codes,
                                  uint8_t* sel_scales) {
  const int chunks = checkpoint.cols / kChunkElements;
  const int64_t per_expert = int64_t{checkpoint.rows} * chunks;
  const int64_t total = per_expert * checkpoint.experts;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t expert = i / per_expert;
    const int64_t row = (i % per_expert) / chunks;
    const int q = static_cast<int>(i % chunks);
    const int64_t to = expert * per_expert + SelChunkIndex(row, q, chunks);
    const uint4 code = reinterpret_cast<const uint4*>(checkpoint.codes)[i];
    reinterpret_cast<uint4*>(sel_codes)[to] = make_uint4(ToSelLayout(code.x), ToSelLayout(code.y),
                                                         ToSelLayout(code.z), ToSelLayout(code.w));
    reinterpret_cast<uint16_t*>(sel_scales)[to] =
        reinterpret_cast<const uint16_t*>(checkpoint.scales)[i];
  }
}

}  // namespace

absl::Status CanImplementSelKernels(const MoeGeometry& g, int max_group_slots) {
  for (auto [name, cols] : {std::pair<const char*, int>{"hidden", g.hidden}, {"ff", g.ff}}) {
    if (cols % kChunkElements != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %d is not a multiple of 32, which the cuda kernels' 16-byte loads need", name,
          cols));
    }
    // The least a launch stages: one group's rows, with one tile per block.
    if (SmemBytes(max_group_slots == 1, cols, max_group_slots, 1, max_group_slots, 1, 1,
                  Tuning<true, true>::kStages,
                  Tuning<true, true>::kChunksPerThread) > kMaxDynamicSmemBytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %d inputs x %d slots per group do not fit the %d KiB of shared memory the "
          "cuda kernels stage inputs in",
          name, cols, max_group_slots, kMaxDynamicSmemBytes / 1024));
    }
  }
  return absl::OkStatus();
}

absl::Status LaunchToSelLayout(const DeviceNvfp4Bank& checkpoint, uint8_t* sel_codes,
                               uint8_t* sel_scales, cudaStream_t stream) {
  RETURN_IF_ERROR(CheckBank("sel layout", checkpoint));
  if (sel_codes == nullptr || sel_scales == nullptr ||
      reinterpret_cast<uintptr_t>(sel_codes) % 16 != 0 ||
      reinterpret_cast<uintptr_t>(sel_scales) % 16 != 0 || checkpoint.rows % 8 != 0) {
    return absl::InvalidArgumentError(
        "sel layout: rows must be a multiple of 8 and the sel buffers aligned like the bank's");
  }
  ToSelLayoutKernel<<<4 * 132, 256, 0, stream>>>(checkpoint, sel_codes, sel_scales);
  CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

absl::Status LaunchSelGuSilu(const SelGuSiluArgs& a, cudaStream_t stream) {
  RETURN_IF_ERROR(CheckBank("gate_up", a.gate_up));
  RETURN_IF_ERROR(CheckGroups(a.groups));
  if (a.gate_up.rows % 16 != 0 || a.selected < 1 || a.x == nullptr || a.h == nullptr ||
      a.gate_global == nullptr || a.up_global == nullptr) {
    return absl::InvalidArgumentError(
        "sel_gu_silu: rows must be 2*ff with ff a multiple of 8, "
        "selected positive, and every pointer set");
  }
  const int ff = a.gate_up.rows / 2;
  const SelParams p{.codes = a.gate_up.codes,
                    .scales = a.gate_up.scales,
                    .expert_code_bytes = int64_t{a.gate_up.rows} * a.gate_up.cols / 2,
                    .expert_scale_bytes = int64_t{a.gate_up.rows} * a.gate_up.cols / 16,
                    .cols = a.gate_up.cols,
                    .out_rows = ff,
                    .tiles_per_group = ff / 8,
                    .staged_cols = a.groups.max_group_slots,
                    .in = a.x,
                    .in_row_div = a.selected,
                    .global_a = a.gate_global,
                    .global_b = a.up_global,
                    .group_expert = a.groups.expert,
                    .group_slot_table = a.groups.slot_table,
                    .out = a.h};
  return LaunchEither<true>(p, a.groups, (a.groups.slots_total + a.selected - 1) / a.selected,
                            stream);
}

absl::Status LaunchSelDown(const SelDownArgs& a, cudaStream_t stream) {
  RETURN_IF_ERROR(CheckBank("down", a.down));
  RETURN_IF_ERROR(CheckGroups(a.groups));
  if (a.down.rows % 16 != 0 || a.h == nullptr || a.y == nullptr || a.down_global == nullptr) {
    return absl::InvalidArgumentError(
        "sel_down: rows (hidden) must be a multiple of 16 and every pointer set");
  }
  const SelParams p{.codes = a.down.codes,
                    .scales = a.down.scales,
                    .expert_code_bytes = int64_t{a.down.rows} * a.down.cols / 2,
                    .expert_scale_bytes = int64_t{a.down.rows} * a.down.cols / 16,
                    .cols = a.down.cols,
                    .out_rows = a.down.rows,
                    .tiles_per_group = a.down.rows / 16,
                    .staged_cols = a.groups.max_group_slots,
                    .in = a.h,
                    .in_row_div = 1,
                    .global_a = a.down_global,
                    .global_b = nullptr,
                    .group_expert = a.groups.expert,
                    .group_slot_table = a.groups.slot_table,
                    .out = a.y};
  return LaunchEither<false>(p, a.groups, a.groups.slots_total, stream);
}

}  // namespace gpuprobe
