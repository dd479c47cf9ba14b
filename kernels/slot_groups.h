// The host-side launch plan of the routed MoE kernels: which expert each block column reads
// and which slots it serves. The per-slot kernels get one group per slot (an expert named by k
// slots is read k times); the union-gather kernels get one group per distinct expert, split
// into groups of at most kMaxGroupSlots slots (the tensor-core tile width), so each distinct
// expert is read once per chunk as long as no more than 8 slots name it.
//
//   SlotGroups plan = UnionGroups(sel);   // built once per arm, outside any timed region
#pragma once

#include <cstdint>
#include <vector>

namespace gpuprobe {

inline constexpr int kMaxGroupSlots = 8;

struct SlotGroups {
  std::vector<int32_t> expert;      // per group
  std::vector<int32_t> slot_begin;  // per group, plus one: group g owns slots[begin[g], begin[g+1])
  std::vector<int32_t> slots;       // slot ids, grouped
  int max_group_slots = 0;

  int groups() const { return static_cast<int>(expert.size()); }
};

// One group per slot, in slot order.
SlotGroups PerSlotGroups(const std::vector<int32_t>& sel);

// One group per distinct expert (first appearance order), at most kMaxGroupSlots slots each.
SlotGroups UnionGroups(const std::vector<int32_t>& sel);

// Whether group g of the plan serves slot g and no other, for every g (per-slot plans, and
// union plans whose experts are all distinct).
bool SlotsAreGroups(const SlotGroups& plan);

// How many different experts the plan's groups read.
int DistinctExperts(const SlotGroups& plan);

// The plan's slots as a table of max_group_slots columns, what the sel kernels read: row g holds
// group g's slots in order, then -1. One read finds a group's slot n, with no slot_begin first.
std::vector<int32_t> SlotTable(const SlotGroups& plan);

}  // namespace gpuprobe
