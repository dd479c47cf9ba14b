// How a sel kernel launch is shaped for a card: blocks, warps per block, K splits, the inputs
// each block stages and its shared memory. Plain host code (no CUDA), so that unit tests plan
// launches for any card without a GPU; the launcher (kernels/moe_sel_kernels.cu) takes the card's
// properties from the device.
//
//   const SelDevice h200{.sms = 132, .l2_bytes = 62914560, .max_smem_bytes = 232448};
//   ASSIGN_OR_RETURN(LaunchPlan plan, PlanLaunch({.one_slot = true, ...}, h200));
#pragma once

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"

namespace gpuprobe::sel {

// What the planner needs of the card, read from the device (cudaDeviceGetAttribute).
struct SelDevice {
  int sms = 0;             // cudaDevAttrMultiProcessorCount
  int64_t l2_bytes = 0;    // cudaDevAttrL2CacheSize
  int max_smem_bytes = 0;  // cudaDevAttrMaxSharedMemoryPerBlockOptin
};

// How a launch splits its work: tiles of weight rows of one group (a warp's item: Tuning::kOctets),
// `splits` warps per tile (each a contiguous K range), blocks of `warps` warps, each block a
// contiguous range of tiles.
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

// One launch's work, as the launcher sees it before planning.
struct SelWork {
  bool one_slot = false;  // every group one slot (the per-slot plans)
  int tiles = 0;          // groups x tiles_per_group
  int tiles_per_group = 0;
  int cols = 0;         // K: inputs per weight row
  int per_thread = 0;   // chunks per thread per pass (Tuning::kChunksPerThread)
  int octets = 0;       // weight-row octets of a warp's item (Tuning::kOctets)
  int stages = 0;       // ring depth in passes (Tuning::kStages)
  int staged_cols = 0;  // the plan's widest group
  int input_rows = 0;   // distinct input rows of the launch
};

// Bytes of shared memory a block of this shape takes (SmemCarve's carve plus the rings).
// cluster_halves: with room for K half 1's sums and its out_scale.
int64_t SmemBytes(bool one_slot, int cols, int staged_rows, int groups_per_block, int staged_cols,
                  int warps, int splits, int stages, int chunks_per_thread, int octets,
                  bool cluster_halves = false);

// Sizes the grid to the card: one block per SM while its shared memory fits, as many warps as
// the block's tiles need in whole rounds (so the last round is nearly full), and where there
// are fewer tiles than a block has warps to spare each tile's K split across warps so that
// every SM still streams with many warps. With token windows of window_groups groups (TileAt;
// 0: none) a block stages one input row per window it touches. INVALID_ARGUMENT where no block
// of the plan's inputs fits the card's shared memory.
absl::StatusOr<LaunchPlan> PlanLaunch(const SelWork& work, const SelDevice& device,
                                      int window_groups);

// Clusters of two blocks splitting each tile's K (Deal::kClusterKHalves) for a group plan which,
// dealt consecutively at one block per SM, would have every block stage every input row and
// split each tile's K across warps, so that every block converts whole input rows for a share of
// K (the union kernels at small unions): sms / 2 ranges of tiles, block rank h staging and
// computing K half h with one warp per tile. None where ClusterKHalvesPay says they do not pay,
// the card's SMs are odd, a range has more tiles than a block has warps, or the blocks' shared
// memory does not hold it.
std::optional<LaunchPlan> PlanClusterHalves(const SelWork& work, const SelDevice& device);

}  // namespace gpuprobe::sel
