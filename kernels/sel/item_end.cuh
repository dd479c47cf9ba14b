// Where a warp's sums go when an item is done, and how the two blocks of a cluster that share a
// tile's K (the cluster K halves) meet before the tile is written.
#pragma once

#include <cstdint>

#include "kernels/arch/cluster.cuh"
#include "kernels/sel/block_work.cuh"
#include "kernels/sel/epilogue.cuh"
#include "kernels/sel/mainloop.cuh"
#include "kernels/sel/smem_layout.h"
#include "kernels/sel/tuning.h"

namespace gpuprobe::sel {

// One item's sums (acc, after the column reduction where per-slot): written to its tile, at the
// places found when the item started where the kernel finds them there, or left in the warp's
// partials for the split plans' reduction.
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal, int kOctets>
__device__ __forceinline__ void StoreItemSums(const SelParams& p, const BlockTiles& bt,
                                              const BlockGroups& bg, const ComputeCursor& at,
                                              const float* out_scale, float* partials,
                                              const float (&acc)[4], int warp, int lane, int g,
                                              int c) {
  if (kOutputAtItemStart<kGateUpSilu, kOneSlot, kDeal> && p.splits == 1) {
    if (c == 0) {
#pragma unroll
      for (int i = 0; i < kOctets; ++i) at.out[8 * i] = acc[i] * at.out_factor;
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
    WriteTile<kGateUpSilu, kOneSlot, kDeal, kOctets>(
        p, bt, bg, TileAt<kDeal>(p, bt.first + at.index), out_scale, acc, g, c);
  } else {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      partials[warp * kPartialFloatsPerWarp + 4 * lane + k] = acc[k];
    }
  }
}

// The cluster K halves' exchange barrier in rank 0's shared memory, after the partial sums. (Its
// address is computed where it is used: kept live through the main loop it spills a register.)
__device__ __forceinline__ uint64_t* ExchangeBarrier(float* partials, int warps,
                                                     const SelParams& p) {
  return reinterpret_cast<uint64_t*>(reinterpret_cast<uint4*>(partials) +
                                     ExchangeBarrierOffset(warps, p.staged_rows));
}

// The cluster K halves: rank 1 sends its sums and its rows' out_scale to rank 0 and leaves; rank
// 0's warps wait for the bytes, add them to their own and write the tiles.
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal, int kOctets>
__device__ __forceinline__ void ExchangeClusterHalves(const SelParams& p, const BlockTiles& bt,
                                                      const BlockGroups& bg, const float* out_scale,
                                                      float* partials, uint64_t* exchange,
                                                      const float (&acc)[4], int items, int warps,
                                                      int warp, int lane, int g, int c) {
  float* peer_scale = partials + warps * kPartialFloatsPerWarp;
  arch::ClusterWait();
  if (ClusterRank() == 1) {
    if (warp < items) {
      arch::SendToRankZero(partials + warp * kPartialFloatsPerWarp + 4 * lane, acc, exchange);
    }
    for (int r = threadIdx.x; r < p.staged_rows; r += blockDim.x) {
      arch::SendToRankZero(peer_scale + r, out_scale[r], exchange);
    }
    return;
  }
  if (threadIdx.x == 0) arch::ExpectExchangeBytes(exchange, items * 32 * 16 + p.staged_rows * 4);
  if (warp < items) {
    arch::WaitExchange(exchange);
    float peer[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) peer[k] = partials[warp * kPartialFloatsPerWarp + 4 * lane + k];
    WriteTile<kGateUpSilu, kOneSlot, kDeal, kOctets>(p, bt, bg, bt.first + warp, out_scale, acc, g,
                                                     c, peer, peer_scale);
  }
}

}  // namespace gpuprobe::sel
