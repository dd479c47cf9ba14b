// SelNvfp4Kernel: the routed NVFP4 MoE kernel (gate+up with SiLU, or down), one instantiation
// per (kernel, group width, deal). Launched by kernels/moe_sel_kernels.cu only.
#pragma once

#include <cstdint>

#include "kernels/arch/cluster.cuh"
#include "kernels/arch/cp_async.cuh"
#include "kernels/sel/block_work.cuh"
#include "kernels/sel/epilogue.cuh"
#include "kernels/sel/item_end.cuh"
#include "kernels/sel/mainloop.cuh"
#include "kernels/sel/params.h"
#include "kernels/sel/smem_layout.h"
#include "kernels/sel/staging.cuh"
#include "kernels/sel/tuning.h"

namespace gpuprobe::sel {

using arch::ClusterArrive;
using arch::CommitCopies;
using arch::InitExchangeBarrier;
using arch::WaitCopies;

// A warp's items (warp, warp + warps, ...) through its ring: the software pipeline's compute
// side. `issue_next(stage)` requests the next pass into a free stage and commits its copy group.
// acc ends holding the last item's sums where the cluster K halves exchange them.
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal, int kOctets, typename IssueNext>
__device__ __forceinline__ void ComputeItems(const SelParams& p, const BlockTiles& bt,
                                             const BlockGroups& bg, const uint4* staged,
                                             const uint4* zero, const float* out_scale,
                                             float* partials, uint8_t* ring, int items, int warps,
                                             int warp, int lane, int g, int c,
                                             IssueNext& issue_next, float (&acc)[4]) {
  using Tune = Tuning<kGateUpSilu, kOneSlot, kOctets>;
  constexpr int kChunks = Tune::kChunksPerThread;
  constexpr int kChunksPerPass = Tune::kChunksPerPass;
  constexpr int kStages = Tune::kStages;
  using Stage = StageLane<kChunks, kOctets>;
  // Where a computed stage is refilled: right after its compute, so that an item's end (its sums,
  // lookups and stores) does not hold the request back, or at the top of the next iteration. The
  // same requests in the same order either way; each kernel takes the place measured faster for
  // it (H200, 2026-12-01: after the compute 0.1-0.3 us faster for gate+up and the
  // union down, but slower for the cluster halves and, at t = 8 and 256 / 4096, the per-slot down).
  constexpr bool kRefillAfterCompute = kDeal != Deal::kClusterKHalves && (kGateUpSilu || !kOneSlot);
  ComputeCursor at = StartCompute<kGateUpSilu, kOneSlot, kDeal, kOctets>(p, bt, bg, warp, staged,
                                                                         zero, out_scale, g, c);
  // The lane's places in the stage computed last: at first the ring's last stage, still free.
  const Stage last = Stage::At(ring + (kStages - 1) * StageBytes(kChunks, kOctets), lane);
  const RingWalk<kChunks, kOctets, kStages> ring_walk{last.code};
  Stage stage = last;
  if (kRefillAfterCompute) issue_next(last);
  for (;;) {
    // The stage computed last is free again (each lane reads only what it copied): refilled
    // here or right after its compute.
    if (!kRefillAfterCompute) issue_next(stage);
    stage = ring_walk.Next(stage);
    WaitCopies<kStages - 1>();  // all but the newest kStages - 1 groups: this pass landed
    // Passes wholly inside the item (all but an item's last, where K is not a multiple of a
    // pass) take the path without clamps and selects.
    if (at.q + kChunksPerPass <= at.chunk_end) {
      ComputePass<kOneSlot, kChunks, kOctets, true>(ReadPass<kChunks, kOctets, true>(stage, lane),
                                                    at.b, at.q, at.chunk_end, c, acc);
    } else {
      ComputePass<kOneSlot, kChunks, kOctets, false>(ReadPass<kChunks, kOctets, false>(stage, lane),
                                                     at.b, at.q, at.chunk_end, c, acc);
    }
    if (kRefillAfterCompute) issue_next(stage);
    if (at.q + kChunksPerPass < at.chunk_end) {
      at.q += kChunksPerPass;
      at.b += StagedChunkOffset<kOneSlot>(kChunksPerPass);
      continue;
    }
    // The item is done: write its tile, or (split plans) leave its partial sums.
    if (kOneSlot) SumColumnThreads<kOctets>(acc);
    if (kDeal == Deal::kClusterKHalves) break;  // one item per warp, its sums kept in acc
    StoreItemSums<kGateUpSilu, kOneSlot, kDeal, kOctets>(p, bt, bg, at, out_scale, partials, acc,
                                                         warp, lane, g, c);
#pragma unroll
    for (int k = 0; k < 4; ++k) acc[k] = 0.0f;
    if (at.index + warps >= items) break;
    at = StartCompute<kGateUpSilu, kOneSlot, kDeal, kOctets>(p, bt, bg, at.index + warps, staged,
                                                             zero, out_scale, g, c);
  }
}

// The cluster K halves' gate+up warps (one item of a few passes each: a start-bound launch)
// request one pass before the staging: a second delays the staging more than it feeds the loop
// (H200, 2026-12-01: the union-10 gate+up 0.3-0.4 us faster with one, 0.25 with none).
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal, int kOctets>
constexpr int kEarlyPasses = kDeal == Deal::kClusterKHalves&& kGateUpSilu
                                 ? 1
                                 : Tuning<kGateUpSilu, kOneSlot, kOctets>::kPassesBeforeStaging;
// Down stages with per-row barriers, gate+up with the block's (StageInputs says why). The
// per-slot gate+up issues its first passes before the rows' set-up where the block stages every
// input row (t = 1); the other kernels keep one order (kernel-decisions.md row 164: H100,
// 2026-12-05, the per-slot down at t = 1 and the union kernels at union 10 were 0.7-6% slower
// with it).
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal>
constexpr bool kMayIssueFirst = kGateUpSilu&& kOneSlot&& kDeal == Deal::kConsecutive;

// A persistent block of warps streams a contiguous range of tiles: item i of the block (tile
// first + i / splits, K split i % splits) belongs to warp i % warps. A warp's items form one
// software pipeline through its ring of kStages passes: while one pass is computed the next
// kStages - 1 are in flight, across tile boundaries too; the first kPassesBeforeStaging are
// requested before the inputs are staged, the others after.
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal, int kOctets>
__global__ void __launch_bounds__(kMaxWarps * 32, 1) SelNvfp4Kernel(SelParams p) {
  using Tune = Tuning<kGateUpSilu, kOneSlot, kOctets>;
  constexpr int kChunks = Tune::kChunksPerThread;
  constexpr int kChunksPerPass = Tune::kChunksPerPass;
  constexpr int kStages = Tune::kStages;
  static_assert(kPassQuads<kGateUpSilu> == kChunks);  // the scale pairs' groups (SelBands)
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
  uint8_t* ring = reinterpret_cast<uint8_t*>(smem + carve.rings) +
                  warp * kStages * StageBytes(kChunks, kOctets);
  using Stage = StageLane<kChunks, kOctets>;

  // The blocks of a cluster arrive now and wait before rank 1 writes into rank 0's shared
  // memory, which therefore exists, its exchange barrier initialised, by then.
  if constexpr (kDeal == Deal::kClusterKHalves) {
    if (threadIdx.x == 0) InitExchangeBarrier(ExchangeBarrier(partials, warps, p));
    ClusterArrive();
  }
  const BlockTiles bt = MyTiles<kDeal>(p);
  const int chunks = p.cols / kChunkElements;
  const int items = (bt.last - bt.first) * p.splits;

  // The load cursor runs kStages - 1 passes ahead of the compute cursor. Every step commits
  // one copy group, empty past the end, so that "all but the newest kStages - 1 groups are
  // done" always means "the pass about to be computed has landed".
  LoadCursor<kOctets, kBandOctets<kGateUpSilu>> load{warp};
  auto issue_next = [&](const Stage& to) {
    if (load.index < items) {
      IssuePass<kChunks>(load, chunks, lane, to);
      NextPass<kChunksPerPass>(load);
      if (load.q >= load.chunk_end) {
        load.index += warps;
        if (load.index < items) {
          load = StartLoad<kGateUpSilu, kDeal, kOctets>(p, bt, bg.expert, load.index, g);
        }
      }
    }
    CommitCopies();
  };
  constexpr int kEarly = kEarlyPasses<kGateUpSilu, kOneSlot, kDeal, kOctets>;
  StageInputs<kOneSlot, kDeal, kEarly, !kGateUpSilu, kMayIssueFirst<kGateUpSilu, kOneSlot, kDeal>>(
      p, bt, bg, staged, zero, out_scale, row_max, row_input, [&] {
        if (warp < items) {  // kEarlyConsecutive: the first expert from global memory
          load = StartLoad<kGateUpSilu, kDeal, kOctets>(
              p, bt, kDeal == Deal::kEarlyConsecutive ? p.group_expert + bt.first_group : bg.expert,
              warp, g);
        }
        for (int stage = 0; stage < kEarly; ++stage) {
          issue_next(Stage::At(ring + stage * StageBytes(kChunks, kOctets), lane));
        }
      });
  for (int stage = kEarly; stage < kStages - 1; ++stage) {
    issue_next(Stage::At(ring + stage * StageBytes(kChunks, kOctets), lane));
  }

  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  if (warp < items) {
    ComputeItems<kGateUpSilu, kOneSlot, kDeal, kOctets>(p, bt, bg, staged, zero, out_scale,
                                                        partials, ring, items, warps, warp, lane, g,
                                                        c, issue_next, acc);
  }
  WaitCopies<0>();
  if constexpr (kDeal == Deal::kClusterKHalves) {
    ExchangeClusterHalves<kGateUpSilu, kOneSlot, kDeal, kOctets>(
        p, bt, bg, out_scale, partials, ExchangeBarrier(partials, warps, p), acc, items, warps,
        warp, lane, g, c);
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
  WriteTile<kGateUpSilu, kOneSlot, kDeal, kOctets>(p, bt, bg, tile, out_scale, acc, g, c);
}

}  // namespace gpuprobe::sel
