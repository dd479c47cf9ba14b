// Which deal of the sel kernels (kernels/moe_sel_kernels.cu, `Deal`) a launch takes, where the
// choice is measured rather than derived: rules fitted to H200 runs of 2026-11-30 and 2026-12-01.
//
// Token windows (per-slot gate+up): a block's warps read the tiles of one token's `selected`
// experts side by side (position i of a window is tile i / selected of the token's expert
// i % selected) instead of a stretch of consecutive tiles of one or two experts. They pay where
// an expert's tiles span at least four blocks' ranges and the launch's distinct experts do not
// fit in the L2 (warm cache: experts 256 / hidden 4096 / ff 1024 at t = 4, unions 24-32, 13-17%
// faster; 128 / 2080 / 1056 at t = 8, union 32, 4%; cold cache 1-3%), and cost 2-5% elsewhere
// (the windowed loop runs 203 instructions per pass against 199): at t = 1, at unions whose
// experts stay in the L2, and where an expert spans 3.2 blocks or fewer (the serving geometry at
// t = 4 union 40, and every larger t).
//
// An early start (per-slot gate+up, consecutive tiles; `Deal::kEarlyConsecutive` in the kernels):
// a block asks for its global scales and copies its inputs at entry and each warp issues its first
// passes as soon as its first expert returns, instead of after the block's group data. It pays
// where the codes come from DRAM (H200, 2026-12-01: the serving geometry at t = 6 union 60
// 30.1-30.2 -> 29.7 us, 1.09x the floor; t = 8 unions 60-80 0.3-0.5 us faster); where the experts
// repeat from the L2 a kernel that held both starts ran 0.3-1.0 us slower, so it is
// taken from 3/2 of the L2 of distinct experts' bytes, where token windows do not pay.
//
// Wide items for the per-slot down (two mma tiles of a slot per item, Tuning::kOctets = 4): the
// launcher (LaunchEither) takes them wherever their plan splits no tile's K. With the down bank's
// octets in bands of 4 (kernels/nvfp4_pack.h) a wide item's pass is one run from one pointer and
// each lane copies its scale pairs in one 8-byte copy, so the wide down pays where its bytes come
// from the L2 and where they come from DRAM alike. H200, 2026-12-04, two runs each in one
// sitting, graph-timed medians of the down, base (one tile, and wide items only where each
// expert had 5 slots or more, without bands) -> wide items with bands:
//   warm: t = 3 unions 10-30 10.2-10.3 -> 8.8-9.0 us; t = 6 unions 20-50 16.3-16.4 -> 13.9-14.2,
//         union 60 16.5 -> 15.4-16.3; t = 8 unions 20-50 20.2-20.3 -> 18.1-18.5, unions 60-70
//         20.2-20.4 -> 19.3-19.9, union 80 22.2-22.6 -> 22.1-22.3; 256 / 4096 / 1024 / 8 at t = 4
//         unions 8-24 20.2-20.4 -> 16.9-18.6, union 32 22.2 -> 21.4-21.8;
//   cold (4 placements a job): t = 6 unions 10-60 2.4-5.4% faster; t = 8 unions 10-30 and 50-80
//         3-11% faster, union 40 23.1 -> 24.2-24.3 (5% slower), union 60 25.9 -> 26.1.
// They do not pay where the wider items would need a K split to keep the warps busy (t = 1: the
// split's end cost more than they saved, kernel-decisions.md row 154).
//
// Cluster K halves (group plans whose every block stages every input row): two blocks of a
// cluster split each tile's K, so each stages half of every input row. They pay where a block
// stages many inputs (the union variant's gate+up at the serving geometry's unions 10-16: t = 5,
// 12,800 inputs, 2-10% faster; t = 6, 15,360, 7-9% at union 10; t = 8 13%; 256 / 4096 at t = 4,
// 16,384 inputs, 11%) and cost or are mixed where it stages fewer (t = 2, 5,120 inputs: 7-24%
// slower; t = 3, 7,680: -3% to +2.5%; t = 4, 10,240: 8-9% faster at unions 10-12, 8% slower at
// union 16).
#pragma once

#include <cstdint>

namespace gpuprobe {

struct TokenWindowCase {
  int groups = 0;                     // of the launch's plan
  int selected = 0;                   // slots per token
  bool slots_are_groups = false;      // group g serves slot g alone (SlotsAreGroups)
  int tiles_per_group = 0;            // the gate+up kernel's tiles of one expert: ff / 8
  int sms = 0;                        // blocks of the launch: one per SM
  int64_t distinct_expert_bytes = 0;  // codes and scales of the plan's distinct experts
  int64_t l2_bytes = 0;               // the card's L2
};

// Every slot's token window is whole (`selected` divides the groups, selected > 1, group g is
// slot g), an expert's tiles span at least kWindowMinBlocksPerExpert blocks' ranges, and the
// distinct experts' bytes exceed the L2.
inline constexpr int kWindowMinBlocksPerExpert = 4;
bool TokenWindowsPay(const TokenWindowCase& c);

// Group g serves slot g alone and the plan's blocks stage their groups' rows, not every input row
// (the early start derives a staged row's input row from its group), and the distinct experts'
// bytes exceed 3/2 of the L2.
bool EarlyStartPays(bool slots_are_groups, bool stages_every_input_row,
                    int64_t distinct_expert_bytes, int64_t l2_bytes);

// Every input row staged whole in every block holds `input_rows` x `cols` inputs: cluster K halves
// where they are at least kClusterKHalvesMinStagedInputs (the plan's shape is the launcher's
// to check).
inline constexpr int64_t kClusterKHalvesMinStagedInputs = 12800;
bool ClusterKHalvesPay(int input_rows, int cols);

}  // namespace gpuprobe
