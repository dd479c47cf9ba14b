// A block's prologue: its group data read, its input rows staged in shared memory as f16 hi +
// lo parts (scaled per row by a power of two), with the codes' first passes issued while the
// inputs are in flight.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/arch/cp_async.cuh"
#include "kernels/nvfp4_pack.h"
#include "kernels/sel/block_work.cuh"
#include "kernels/sel/smem_layout.h"

namespace gpuprobe::sel {

using arch::CommitCopies;
using arch::CopyAsync16;
using arch::CopyAsync8;
using arch::WaitCopies;

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
// go out before any warp's code passes (H200, 2026-12-01: without that barrier, or
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

// The group down, where its warps walk one row each and a lane's units fit kRegisterUnits, loads
// each lane's units into registers (ld.global) where the other plans copy them to shared memory,
// at the same place, and takes the row's maximum and its conversion from there in one pass: no
// shared-memory round trip of the f32 inputs, no second read of them (H200, 2026-12-01:
// the union-10 down 0.47 us faster; the cluster gate+up, whose rows meet on block
// barriers, unchanged, so it keeps the copies).
constexpr int kRegisterUnits = 8;

// register_walk's loads: the lane's units of its first row (row_input_of[r], or row r where it is
// null), zeros past the row or for a row without an input row; one empty commit group, the count
// WaitCopies keeps.
__device__ __forceinline__ void LoadUnits(const SelParams& p, const BlockK& k,
                                          const RowWalk& first_walk, int rows,
                                          const int* row_input_of,
                                          float4 (&units)[kRegisterUnits]) {
  const int r = first_walk.first_row;
  const int in_row = r >= rows ? -1 : row_input_of == nullptr ? r : row_input_of[r];
  const float4* from =
      reinterpret_cast<const float4*>(p.in + int64_t{max(in_row, 0)} * p.cols) + k.first_unit;
#pragma unroll
  for (int u = 0; u < kRegisterUnits; ++u) {
    const int col = first_walk.first_unit + u * first_walk.unit_step;
    units[u] =
        in_row >= 0 && col < k.units ? __ldg(from + col) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  CommitCopies();
}

// Each staged row's largest magnitude, then its scales (out_scale[r], the decode's; the input
// scale it is converted with) and its units converted in place to f16 hi and lo parts.
// register_walk: the lane's units are in `units` (LoadUnits), not in their places.
template <bool kOneSlot, bool kRowBarriers>
__device__ __forceinline__ void ScaleRows(const SelParams& p, uint4* staged,
                                          const StagedLayout& layout, int rows, int units_per_row,
                                          bool register_walk, const float4 (&units)[kRegisterUnits],
                                          float* out_scale, float* row_max) {
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
    // the units they read, so no barrier waits for other warps' inputs (H200, 2026-12-01:
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
}

// The input rows a block stages: every row of the groups its tiles touch (or every input row,
// all_input_rows), or one per token window.
template <Deal kDeal>
__device__ __forceinline__ int StagedInputRows(const SelParams& p, const BlockTiles& bt) {
  if constexpr (kDeal != Deal::kTokenWindows) {
    const int last_group = min(p.groups, p.tiles_per_group_divisor.Div(bt.last - 1) + 1);
    return p.all_input_rows > 0 ? p.all_input_rows : (last_group - bt.first_group) * p.staged_cols;
  } else {
    return p.window_positions_divisor.Div(bt.last - 1) - bt.first_window + 1;
  }
}

// Each staged row's input row (row_input, where not every input row is staged) and its maximum's
// zero; per-slot, the zero row; then the block's barrier.
template <bool kOneSlot, Deal kDeal>
__device__ __forceinline__ void SetUpRows(const SelParams& p, const BlockTiles& bt,
                                          const BlockGroups& bg, const StagedLayout& layout,
                                          int rows, uint4* zero, float* row_max, int* row_input) {
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
}

// The block's groups' global scales into bg: the thread's own group's (scale_group =
// threadIdx.x, requested before the staging), then any further groups'.
__device__ __forceinline__ void StoreGlobalScales(const SelParams& p, const BlockTiles& bt,
                                                  const BlockGroups& bg, int groups,
                                                  bool loads_scales, float global_a,
                                                  float global_b) {
  const int scale_group = threadIdx.x;
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
}

template <bool kOneSlot, Deal kDeal, int kPrologueGroups, bool kRowBarriers, bool kMayIssueFirst,
          typename Prologue>
__device__ void StageInputs(const SelParams& p, const BlockTiles& bt, const BlockGroups& bg,
                            uint4* staged, uint4* zero, float* out_scale, float* row_max,
                            int* row_input, Prologue&& issue_prologue) {
  const int groups = p.groups;
  const int rows = StagedInputRows<kDeal>(p, bt);
  const BlockK k = MyK<kDeal>(p);
  const StagedLayout layout = MakeStagedLayout(kOneSlot, k.chunks);
  const int units_per_row = k.units;
  const RowWalk first_walk = WarpRowWalk(p);
  const bool register_walk = !kOneSlot && kRowBarriers && rows <= first_walk.row_step &&
                             units_per_row <= kRegisterUnits * first_walk.unit_step;
  float4 units[kRegisterUnits];
  // The group data goes out first; where the block stages every input row (which needs none of
  // it), the inputs' copies follow at once, so that their round trip overlaps the group data's
  // instead of queueing ahead of it.
  // kEarlyConsecutive: the global scales (asked for first: a load sent after the codes' passes
  // comes back behind them), the inputs and the prologue go out before the group data lands
  // (H200, 2026-12-01: the per-slot gate+up at t = 6 union 60 30.1-30.2 -> 29.7 us).
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
          LoadUnits(p, k, first_walk, rows, nullptr, units);
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
  auto copy_inputs_and_issue = [&] {
    if (p.all_input_rows == 0) {
      if (register_walk) {
        LoadUnits(p, k, first_walk, rows, row_input, units);
      } else {
        CopyInputs<kOneSlot, kDeal>(p, staged, layout, row_input, rows);
      }
    }
    issue_prologue();
  };
  // Where every input row is staged, the inputs went out before the first barrier and the codes'
  // first passes need nothing of the rows' set-up: kMayIssueFirst sends them before it and its
  // barrier, after every warp's inputs still, walking one loop of the two steps (two call sites
  // of each would add 4-9 KB of machine code).
  if constexpr (kDeal == Deal::kEarlyConsecutive) {
    SetUpRows<kOneSlot, kDeal>(p, bt, bg, layout, rows, zero, row_max,
                               row_input);  // its inputs and prologue went out with the group data
  } else if constexpr (!kMayIssueFirst) {
    SetUpRows<kOneSlot, kDeal>(p, bt, bg, layout, rows, zero, row_max, row_input);
    copy_inputs_and_issue();
  } else {
    const bool issue_first = p.all_input_rows > 0;
#pragma unroll 1
    for (int step = 0; step < 2; ++step) {
      if ((step == 0) == issue_first) {
        copy_inputs_and_issue();
      } else {
        SetUpRows<kOneSlot, kDeal>(p, bt, bg, layout, rows, zero, row_max, row_input);
      }
    }
  }
  StoreGlobalScales(p, bt, bg, groups, loads_scales, global_a, global_b);
  WaitCopies<kPrologueGroups>();  // this thread's inputs (the group before the prologue's) landed
  ScaleRows<kOneSlot, kRowBarriers>(p, staged, layout, rows, units_per_row, register_walk, units,
                                    out_scale, row_max);
  __syncthreads();
}

}  // namespace gpuprobe::sel
