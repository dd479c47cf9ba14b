#include "kernels/slot_groups.h"

#include <algorithm>
#include <map>

namespace gpuprobe {
namespace {

void AddGroup(SlotGroups& plan, int32_t expert, const int32_t* slots, int count) {
  plan.expert.push_back(expert);
  plan.slots.insert(plan.slots.end(), slots, slots + count);
  plan.slot_begin.push_back(static_cast<int32_t>(plan.slots.size()));
  plan.max_group_slots = std::max(plan.max_group_slots, count);
}

}  // namespace

SlotGroups PerSlotGroups(const std::vector<int32_t>& sel) {
  SlotGroups plan;
  plan.slot_begin.push_back(0);
  for (size_t s = 0; s < sel.size(); ++s) {
    const int32_t slot = static_cast<int32_t>(s);
    AddGroup(plan, sel[s], &slot, 1);
  }
  return plan;
}

SlotGroups UnionGroups(const std::vector<int32_t>& sel) {
  std::vector<int32_t> order;  // experts by first appearance
  std::map<int32_t, std::vector<int32_t>> slots_of;
  for (size_t s = 0; s < sel.size(); ++s) {
    auto [it, inserted] = slots_of.try_emplace(sel[s]);
    if (inserted) order.push_back(sel[s]);
    it->second.push_back(static_cast<int32_t>(s));
  }
  SlotGroups plan;
  plan.slot_begin.push_back(0);
  for (int32_t expert : order) {
    const std::vector<int32_t>& slots = slots_of[expert];
    for (size_t i = 0; i < slots.size(); i += kMaxGroupSlots) {
      const int count = static_cast<int>(std::min<size_t>(kMaxGroupSlots, slots.size() - i));
      AddGroup(plan, expert, slots.data() + i, count);
    }
  }
  return plan;
}

bool SlotsAreGroups(const SlotGroups& plan) {
  for (int g = 0; g < plan.groups(); ++g) {
    if (plan.slot_begin[g + 1] - plan.slot_begin[g] != 1 || plan.slots[plan.slot_begin[g]] != g) {
      return false;
    }
  }
  return true;
}

int DistinctExperts(const SlotGroups& plan) {
  std::vector<int32_t> experts = plan.expert;
  std::sort(experts.begin(), experts.end());
  return static_cast<int>(std::unique(experts.begin(), experts.end()) - experts.begin());
}

std::vector<int32_t> SlotTable(const SlotGroups& plan) {
  std::vector<int32_t> table(static_cast<size_t>(plan.groups()) * plan.max_group_slots, -1);
  for (int g = 0; g < plan.groups(); ++g) {
    std::copy(plan.slots.begin() + plan.slot_begin[g], plan.slots.begin() + plan.slot_begin[g + 1],
              table.begin() + static_cast<size_t>(g) * plan.max_group_slots);
  }
  return table;
}

}  // namespace gpuprobe
