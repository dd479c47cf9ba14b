#include "server/measure/arm_order.h"

#include <numeric>
#include <utility>

#include "common/seeded_rng.h"

namespace gpuprobe {

std::string_view ArmOrderName(ArmOrder order) {
  switch (order) {
    case ArmOrder::kFixed:
      return "fixed";
    case ArmOrder::kRotate:
      return "rotate";
    case ArmOrder::kShuffle:
      return "shuffle";
  }
  return "fixed";
}

std::vector<int> ArmOrderOfRep(ArmOrder order, int arms, int rep, uint64_t seed) {
  std::vector<int> indices(static_cast<size_t>(arms));
  std::iota(indices.begin(), indices.end(), 0);
  if (arms < 2) return indices;
  if (order == ArmOrder::kRotate) {
    for (int i = 0; i < arms; ++i) indices[i] = (i + rep) % arms;
  } else if (order == ArmOrder::kShuffle) {
    // Fisher-Yates on a generator of its own per rep, so rep r's order depends on nothing else.
    SeededRng rng(seed ^ (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(rep + 1)));
    for (int i = arms - 1; i > 0; --i) {
      std::swap(indices[i], indices[rng.Below(static_cast<uint32_t>(i + 1))]);
    }
  }
  return indices;
}

}  // namespace gpuprobe
