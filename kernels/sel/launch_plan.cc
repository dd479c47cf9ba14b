#include "kernels/sel/launch_plan.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "kernels/sel/launch_deals.h"
#include "kernels/sel/smem_layout.h"
#include "kernels/sel/tuning.h"

namespace gpuprobe::sel {

namespace {

// Groups (windows) a range of `positions` consecutive tiles (positions) can touch.
int Spanned(int positions, int positions_per_group) {
  return (positions + positions_per_group - 2) / positions_per_group + 1;
}

}  // namespace

int64_t SmemBytes(bool one_slot, int cols, int staged_rows, int groups_per_block, int staged_cols,
                  int warps, int splits, int stages, int chunks_per_thread, int octets,
                  bool cluster_halves) {
  const StagedLayout layout = MakeStagedLayout(one_slot, cols / kChunkElements);
  const SmemCarve carve = CarveSmem(one_slot, cluster_halves, staged_rows, groups_per_block,
                                    staged_cols, warps, splits, layout);
  return 16 * int64_t{carve.rings} +
         int64_t{warps} * stages * StageBytes(chunks_per_thread, octets);
}

absl::StatusOr<LaunchPlan> PlanLaunch(const SelWork& work, const SelDevice& device,
                                      int window_groups) {
  const auto [one_slot, tiles, tiles_per_group, cols, per_thread, octets, stages, staged_cols,
              input_rows] = work;
  const int sms = device.sms;
  const int chunks = cols / kChunkElements;
  const int chunks_per_pass = 4 * per_thread;
  const int passes = (chunks + chunks_per_pass - 1) / chunks_per_pass;
  for (int blocks = std::min(sms, tiles); blocks <= tiles; blocks = std::min(tiles, 2 * blocks)) {
    const int per_block = (tiles + blocks - 1) / blocks;
    const int most_splits =
        per_block * 2 <= kMaxWarps ? std::min({kMaxWarps / per_block, passes, kMaxSplits}) : 1;
    // Where the warps' rings would not fit beside the inputs: fewer K splits (fewer warps), then
    // more rounds, before more blocks, each of which stages its inputs again (H200, 2026-12-01:
    // doubling the blocks made the union variant's gate+up at t = 6 union 16 2.1-2.5x slower).
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
        plan.smem_bytes =
            SmemBytes(one_slot, cols, plan.staged_rows, plan.groups_per_block, staged_cols,
                      plan.warps, plan.splits, stages, per_thread, octets);
        if (plan.smem_bytes <= device.max_smem_bytes) return plan;
        if (splits > 1) break;
      }
    }
    if (blocks == tiles) break;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "sel kernels: %d inputs x %d slots per group do not fit the %d KiB of shared memory "
      "the kernels stage inputs in",
      cols, staged_cols, device.max_smem_bytes / 1024));
}

std::optional<LaunchPlan> PlanClusterHalves(const SelWork& work, const SelDevice& device) {
  const auto [one_slot, tiles, tiles_per_group, cols, per_thread, octets, stages, staged_cols,
              input_rows] = work;
  const int sms = device.sms;
  const int chunks_per_pass = 4 * per_thread;
  const int passes = (cols / kChunkElements + chunks_per_pass - 1) / chunks_per_pass;
  const int per_sm = (tiles + sms - 1) / sms;
  const bool splits_k = per_sm * 2 <= kMaxWarps && passes >= 2;
  const bool stages_every_row = input_rows < Spanned(per_sm, tiles_per_group) * staged_cols;
  const int ranges = sms / 2;
  const int per_block = (tiles + ranges - 1) / ranges;
  if (one_slot || sms % 2 != 0 || tiles < sms || !splits_k || !stages_every_row ||
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
  plan.smem_bytes = SmemBytes(false, plan.chunks_per_split * kChunkElements, plan.staged_rows,
                              plan.groups_per_block, staged_cols, plan.warps, 1, stages, per_thread,
                              octets, true);
  if (plan.smem_bytes > device.max_smem_bytes) return std::nullopt;
  return plan;
}

}  // namespace gpuprobe::sel
