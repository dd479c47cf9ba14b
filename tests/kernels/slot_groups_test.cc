#include "kernels/slot_groups.h"

#include <map>
#include <set>

#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

// Every slot appears in exactly one group, and its group reads the slot's expert.
void ExpectCoversEverySlotOnce(const SlotGroups& plan, const std::vector<int32_t>& sel) {
  std::multiset<int32_t> slots(plan.slots.begin(), plan.slots.end());
  ASSERT_EQ(slots.size(), sel.size());
  for (size_t s = 0; s < sel.size(); ++s) EXPECT_EQ(slots.count(static_cast<int32_t>(s)), 1u);
  ASSERT_EQ(plan.slot_begin.size(), plan.expert.size() + 1);
  for (int g = 0; g < plan.groups(); ++g) {
    EXPECT_LE(plan.slot_begin[g + 1] - plan.slot_begin[g], plan.max_group_slots);
    for (int i = plan.slot_begin[g]; i < plan.slot_begin[g + 1]; ++i) {
      EXPECT_EQ(sel[plan.slots[i]], plan.expert[g]);
    }
  }
}

TEST(SlotGroupsTest, PerSlotHasOneGroupPerSlot) {
  const std::vector<int32_t> sel = {5, 5, 9, 1};
  const SlotGroups plan = PerSlotGroups(sel);
  EXPECT_EQ(plan.groups(), 4);
  EXPECT_EQ(plan.max_group_slots, 1);
  ExpectCoversEverySlotOnce(plan, sel);
  EXPECT_EQ(SlotTable(plan), (std::vector<int32_t>{0, 1, 2, 3}));
}

TEST(SlotGroupsTest, UnionHasOneGroupPerDistinctExpert) {
  const std::vector<int32_t> sel = {5, 9, 5, 1, 9, 5};
  const SlotGroups plan = UnionGroups(sel);
  EXPECT_EQ(plan.groups(), 3);
  EXPECT_EQ(plan.expert, (std::vector<int32_t>{5, 9, 1}));
  EXPECT_EQ(plan.max_group_slots, 3);
  ExpectCoversEverySlotOnce(plan, sel);
}

TEST(SlotGroupsTest, UnionOfDistinctExpertsHasOneSlotGroups) {
  const std::vector<int32_t> sel = {5, 9, 1, 3};
  const SlotGroups plan = UnionGroups(sel);
  EXPECT_EQ(plan.groups(), 4);
  EXPECT_EQ(plan.max_group_slots, 1);
  ExpectCoversEverySlotOnce(plan, sel);
  EXPECT_EQ(SlotTable(plan), (std::vector<int32_t>{0, 1, 2, 3}));
}

TEST(SlotGroupsTest, ExpertsNamedByMoreThanEightSlotsAreSplit) {
  const std::vector<int32_t> sel(20, 7);
  const SlotGroups plan = UnionGroups(sel);
  EXPECT_EQ(plan.groups(), 3);  // 8 + 8 + 4
  EXPECT_EQ(plan.max_group_slots, kMaxGroupSlots);
  ExpectCoversEverySlotOnce(plan, sel);
}

TEST(SlotGroupsTest, SlotTableRowsHoldEachGroupsSlotsThenMinusOne) {
  const std::vector<int32_t> sel = {5, 9, 5, 1, 9, 5};  // groups 5: {0, 2, 5}, 9: {1, 4}, 1: {3}
  const SlotGroups plan = UnionGroups(sel);
  EXPECT_EQ(SlotTable(plan), (std::vector<int32_t>{0, 2, 5, 1, 4, -1, 3, -1, -1}));
}

TEST(SlotGroupsTest, SlotsAreGroupsOnlyWhereGroupGServesSlotGAlone) {
  EXPECT_TRUE(SlotsAreGroups(PerSlotGroups({7, 3, 7})));
  EXPECT_TRUE(SlotsAreGroups(UnionGroups({5, 9, 1, 3})));
  EXPECT_FALSE(SlotsAreGroups(UnionGroups({5, 9, 5, 1})));  // expert 5 serves slots 0 and 2
  SlotGroups swapped;  // one slot each, but group 0 serves slot 1
  swapped.expert = {9, 5};
  swapped.slot_begin = {0, 1, 2};
  swapped.slots = {1, 0};
  swapped.max_group_slots = 1;
  EXPECT_FALSE(SlotsAreGroups(swapped));
}

TEST(SlotGroupsTest, DistinctExpertsCountsEachExpertOnce) {
  EXPECT_EQ(DistinctExperts(PerSlotGroups({7, 3, 7, 7, 1})), 3);
  EXPECT_EQ(DistinctExperts(UnionGroups({7, 3, 7, 7, 1})), 3);
  const SlotGroups nine = UnionGroups({4, 4, 4, 4, 4, 4, 4, 4, 4});  // groups of 8 and 1 slots
  ASSERT_EQ(nine.groups(), 2);
  EXPECT_EQ(DistinctExperts(nine), 1);
  EXPECT_EQ(DistinctExperts(PerSlotGroups({})), 0);
}

TEST(SlotGroupsTest, SlotTableOfPerSlotGroupsIsTheSlotsInOrder) {
  EXPECT_EQ(SlotTable(PerSlotGroups({7, 3, 7})), (std::vector<int32_t>{0, 1, 2}));
}

}  // namespace
}  // namespace gpuprobe
