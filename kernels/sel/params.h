// What one launch of a sel kernel receives (SelParams, a __grid_constant__-sized parameter
// block filled in by the host launcher) and how it deals its work (Deal, one kernel
// instantiation per deal).
#pragma once

#include <cstdint>

#include "kernels/fast_divisor.h"

namespace gpuprobe::sel {

// How a launch deals its work to blocks, one instantiation of the kernel each:
//  - kConsecutive: block b owns a range of consecutive tiles and all of their K.
//  - kTokenWindows (per-slot gate+up, kernels/sel/launch_deals.h says when): consecutive positions,
//    each a tile of one of a token's experts (TileAt).
//  - kClusterKHalves (group plans whose every block stages every input row: the union kernels at
//    small unions): clusters of two blocks own one range of tiles; block rank h computes K half h
//    and stages only that half of each input row, and rank 1's partial sums reach rank 0 through
//    distributed shared memory, where the tiles are written (the kernel's end).
//  - kEarlyConsecutive (per-slot gate+up where EarlyStartPays, kernels/sel/launch_deals.h): as
//    kConsecutive, but the block starts without its group data (StageInputs).
enum class Deal { kConsecutive, kTokenWindows, kClusterKHalves, kEarlyConsecutive };

struct SelParams {
  const uint8_t* codes;  // sel layout
  const uint8_t* scales;
  int64_t expert_code_bytes;
  int64_t expert_scale_bytes;
  int cols;      // K
  int out_rows;  // gu: ff (j values); down: hidden
  // LaunchEither's: gu: ff / 8; down: hidden / (8 x Tuning::kOctets).
  int tiles_per_group = 0;
  int staged_cols;  // the plan's widest group
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

}  // namespace gpuprobe::sel
