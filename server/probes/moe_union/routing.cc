#include "server/probes/moe_union/routing.h"

#include <numeric>
#include <utility>

#include "absl/strings/str_format.h"
#include "common/seeded_rng.h"

namespace gpuprobe {

absl::StatusOr<std::vector<int32_t>> ExactUnionRouting(int experts, int selected, int t,
                                                       int union_size, uint64_t seed) {
  if (experts < 1 || selected < 1 || t < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "experts (%d), selected (%d) and t (%d) must be positive", experts, selected, t));
  }
  const int64_t slots = static_cast<int64_t>(t) * selected;
  if (union_size < selected || union_size > experts || union_size > slots) {
    return absl::InvalidArgumentError(
        absl::StrFormat("union: %d must be in [selected=%d, min(t*selected=%d, experts=%d)]",
                        union_size, selected, slots, experts));
  }
  // Only perm[0, union_size) is used: a partial Fisher-Yates shuffle draws exactly those.
  std::vector<int32_t> perm(experts);
  std::iota(perm.begin(), perm.end(), 0);
  SeededRng rng(seed);
  for (int i = 0; i < union_size; ++i) {
    const int j = i + static_cast<int>(rng.Below(static_cast<uint32_t>(experts - i)));
    std::swap(perm[i], perm[j]);
  }
  std::vector<int32_t> sel(slots);
  for (int64_t s = 0; s < slots; ++s) sel[s] = perm[s % union_size];
  return sel;
}

}  // namespace gpuprobe
