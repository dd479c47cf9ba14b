// The sel kernels' shared memory: ring stages, the staged inputs' layout and the carve of a
// block's memory. Compiled for the device and the host alike (GPUPROBE_HD), so that the kernel
// carves its memory and the launch planner sizes it by the same functions.
//
//   const StagedLayout layout = MakeStagedLayout(one_slot, cols / kChunkElements);
//   const SmemCarve carve = CarveSmem(one_slot, false, rows, groups, cols, warps, 1, layout);
#pragma once

#include "kernels/arch/host_device.h"
#include "kernels/sel/tuning.h"

namespace gpuprobe::sel {

// One ring stage of one warp, for rows g + 8i (octet i < octets) of each lane group: codes
// [octet][j][lane] (16 bytes each), then the scales: on IssuePass's short path each lane's pairs
// side by side ([lane][j][octet], 2 bytes each, the first half of the space), otherwise
// [octet][j][lane] the 4-byte word holding the lane's pair.
GPUPROBE_HD constexpr int StageBytes(int chunks_per_thread, int octets) {
  return chunks_per_thread * octets * 32 * (16 + 4);
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

GPUPROBE_HD inline int RoundUp8(int v) { return (v + 7) / 8 * 8; }

GPUPROBE_HD inline int OneSlotChunkOffset(int q) { return 5 * q; }
GPUPROBE_HD inline int GroupChunkOffset(int q) { return 9 * q; }

GPUPROBE_HD inline StagedLayout MakeStagedLayout(bool one_slot, int chunks) {
  if (one_slot) {
    const int part = OneSlotChunkOffset(chunks);
    const int lo = RoundUp8(part) + 4;
    return {RoundUp8(lo + part), lo};
  }
  return {RoundUp8(GroupChunkOffset(chunks)) + 4, 0};
}

// Words of a block's group data (BlockGroups): expert, two global scales and staged_cols slots
// per group.
GPUPROBE_HD inline int BlockGroupsWords(int groups_per_block, int staged_cols) {
  return groups_per_block * (3 + staged_cols);
}

// A block's shared memory, in 16-byte vectors from its start: out_scale, row_max and row_input
// (staged_rows each) and the block's groups, then partial results (split plans; cluster halves:
// K half 1's sums, then its out_scale and the exchange's mbarrier), the zero row (per-slot plans),
// the staged rows, and the warps' rings from `rings` on. The kernel carves its memory and SmemBytes
// sizes it by this one function. The rings start on a 128-byte line: a ring stage is a whole number
// of lines, so each warp's 512-byte code copies fill 4 lines of shared memory, not 5 (measured on
// the H200, 2026-12-01).
struct SmemCarve {
  int partials, zero, staged, rings;
};

// kClusterKHalves: where the exchange's mbarrier lies, in vectors past the partial sums.
GPUPROBE_HD inline int ExchangeBarrierOffset(int warps, int staged_rows) {
  return warps * kPartialFloatsPerWarp / 4 + (staged_rows + 3) / 4;
}

GPUPROBE_HD inline SmemCarve CarveSmem(bool one_slot, bool cluster_halves, int staged_rows,
                                       int groups_per_block, int staged_cols, int warps, int splits,
                                       const StagedLayout& layout) {
  const int partials = (3 * staged_rows + BlockGroupsWords(groups_per_block, staged_cols) + 3) / 4;
  const int partial_vectors = cluster_halves ? ExchangeBarrierOffset(warps, staged_rows) + 1
                                             : (splits > 1 ? warps * kPartialFloatsPerWarp / 4 : 0);
  const int zero = partials + partial_vectors;
  const int staged = zero + (one_slot ? layout.row_vectors : 0);
  return {partials, zero, staged, RoundUp8(staged + staged_rows * layout.row_vectors)};
}

}  // namespace gpuprobe::sel
