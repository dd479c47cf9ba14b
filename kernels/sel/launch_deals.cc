#include "kernels/sel/launch_deals.h"

namespace gpuprobe {

bool TokenWindowsPay(const TokenWindowCase& c) {
  if (!c.slots_are_groups || c.selected < 2 || c.groups % c.selected != 0 || c.sms < 1) {
    return false;
  }
  const int64_t tiles = int64_t{c.groups} * c.tiles_per_group;
  const int64_t tiles_per_block = (tiles + c.sms - 1) / c.sms;
  return c.tiles_per_group >= kWindowMinBlocksPerExpert * tiles_per_block &&
         c.distinct_expert_bytes > c.l2_bytes;
}

bool EarlyStartPays(bool slots_are_groups, bool stages_every_input_row,
                    int64_t distinct_expert_bytes, int64_t l2_bytes) {
  return slots_are_groups && !stages_every_input_row && 2 * distinct_expert_bytes > 3 * l2_bytes;
}

bool ClusterKHalvesPay(int input_rows, int cols) {
  return int64_t{input_rows} * cols >= kClusterKHalvesMinStagedInputs;
}

}  // namespace gpuprobe
