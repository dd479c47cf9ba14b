// How a block and its warps find their work: the block's tiles and part of K, its groups'
// data in shared memory, a warp's items, and the weight and staged rows of a tile.
#pragma once

#include <cstdint>

#include "kernels/arch/cluster.cuh"
#include "kernels/sel/params.h"
#include "kernels/sel/tuning.h"

namespace gpuprobe::sel {

using arch::ClusterRank;

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

__device__ __forceinline__ BlockGroups CarveBlockGroups(int* words, int groups_per_block) {
  return {words, words + 3 * groups_per_block, reinterpret_cast<float*>(words + groups_per_block),
          reinterpret_cast<float*>(words + 2 * groups_per_block)};
}

// One work item of a warp: the weight rows of one tile (rows g + 8i of each lane group, i below
// Tuning::kOctets), over chunks [chunk_begin, chunk_end) of K.
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

// The weight rows a lane reads for a tile, row g of each octet (gate+up: gate row j and up row
// j; down: rows g + 8i of the tile's kOctets x 8), and out_row, where the tile's first sum goes.
template <bool kGateUpSilu, int kOctets>
__device__ __forceinline__ void TileRows(const SelParams& p, int tile, int g, int& group,
                                         int& out_row, int (&rows)[kOctets]) {
  static_assert(!kGateUpSilu || kOctets == 2);
  group = p.tiles_per_group_divisor.Div(tile);
  const int row_tile = tile - group * p.tiles_per_group;
  if (kGateUpSilu) {
    out_row = row_tile * 8 + g;
    rows[0] = out_row;
    rows[1] = p.out_rows + out_row;
  } else {
    out_row = row_tile * 8 * kOctets + g;
#pragma unroll
    for (int i = 0; i < kOctets; ++i) rows[i] = out_row + 8 * i;
  }
}

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

}  // namespace gpuprobe::sel
