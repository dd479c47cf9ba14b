// The order in which one rep runs the sweep's arms. The seed's method is a fixed order; an arm
// that always follows the same neighbour may inherit its cache or clock state, so rotate
// (rep r starts at arm r mod n) and shuffle (a fresh permutation per rep, seeded by the job's
// seed, so the order used can be recomputed from the job) let users check that.
//
//   for (int i : ArmOrderOfRep(ArmOrder::kShuffle, arms.size(), rep, spec.seed)) ...
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace gpuprobe {

enum class ArmOrder { kFixed, kRotate, kShuffle };

std::string_view ArmOrderName(ArmOrder order);  // fixed, rotate, shuffle

// Arm indices 0..arms-1 in the order rep `rep` runs them.
std::vector<int> ArmOrderOfRep(ArmOrder order, int arms, int rep, uint64_t seed);

}  // namespace gpuprobe
