// When the per-slot gate+up kernel takes token windows: a block's warps read the tiles of one
// token's `selected` experts side by side (position i of a window is tile i / selected of the
// token's expert i % selected) instead of a stretch of consecutive tiles of one or two experts.
//
// Measured on the H200 (docs/PERF.md rows 49 and 53; a rule fitted to those runs, not derived):
// windows pay where an expert's tiles span at least four blocks' ranges and the launch's
// distinct experts do not fit in the L2 (warm cache: experts 256 / hidden 4096 / ff 1024 at
// t = 4, unions 24-32, 13-17% faster; 128 / 2080 / 1056 at t = 8, union 32, 4%; cold cache 1-3%),
// and cost 2-5% elsewhere (the windowed loop runs 203 instructions per pass against 199): at
// t = 1, at unions whose experts stay in the L2, and where an expert spans 3.2 blocks or fewer
// (the serving geometry at t = 4 union 40, and every larger t).
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

}  // namespace gpuprobe
