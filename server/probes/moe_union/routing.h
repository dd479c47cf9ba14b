// Exact-union routing: t tokens, `selected` experts each, naming exactly `union_size` distinct
// experts overall.
//
// Token j names experts perm[(j*selected + k) mod U] for k < selected, where perm is a seeded
// random permutation of all experts. That is distinct within a token iff selected <= U, and
// names exactly U distinct experts iff t*selected >= U; any other combination is refused.
//
//   ASSIGN_OR_RETURN(std::vector<int32_t> sel, ExactUnionRouting(512, 10, 6, 60, seed));
//   // sel.size() == 60, slot s = token s / 10
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuprobe {

absl::StatusOr<std::vector<int32_t>> ExactUnionRouting(int experts, int selected, int t,
                                                       int union_size, uint64_t seed);

}  // namespace gpuprobe
