#include "kernels/sel/launch_deals.h"

#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

constexpr int64_t kH200L2Bytes = int64_t{60} << 20;

// A per-slot plan of t tokens x `selected` slots with `distinct` experts of `expert_bytes`, on
// the H200 (132 SMs).
TokenWindowCase PerSlot(int t, int selected, int ff, int distinct, int64_t expert_bytes) {
  return {.groups = t * selected,
          .selected = selected,
          .slots_are_groups = true,
          .tiles_per_group = ff / 8,
          .sms = 132,
          .distinct_expert_bytes = distinct * expert_bytes,
          .l2_bytes = kH200L2Bytes};
}

// Codes and scales of one gate+up expert: 2 x ff rows of hidden / 2 + hidden / 16 bytes.
int64_t GateUpExpertBytes(int hidden, int ff) {
  return int64_t{2} * ff * (hidden / 2 + hidden / 16);
}

// Serving geometry (1.84 MB an expert, 80 tiles): up to t = 3 the experts fit in the L2, and
// from t = 4 on a block's range covers more than a quarter of an expert (25 tiles at t = 4).
TEST(TokenWindowsTest, TheServingGeometryNeverTakesThem) {
  const int64_t expert = GateUpExpertBytes(2560, 640);
  for (int t = 1; t <= 8; ++t) {
    for (int distinct = 1; distinct <= 10 * t; ++distinct) {
      EXPECT_FALSE(TokenWindowsPay(PerSlot(t, 10, 640, distinct, expert)))
          << "t=" << t << " distinct=" << distinct;
    }
  }
}

TEST(TokenWindowsTest, LargeExpertsTakeThemOnceTheirBytesPassTheL2) {
  const int64_t expert = GateUpExpertBytes(4096, 1024);  // 4.72 MB: 13 fill the L2
  EXPECT_FALSE(TokenWindowsPay(PerSlot(4, 8, 1024, 8, expert)));
  EXPECT_FALSE(TokenWindowsPay(PerSlot(4, 8, 1024, 13, expert)));
  EXPECT_TRUE(TokenWindowsPay(PerSlot(4, 8, 1024, 14, expert)));
  EXPECT_TRUE(TokenWindowsPay(PerSlot(4, 8, 1024, 32, expert)));
}

TEST(TokenWindowsTest, AnExpertMustSpanFourBlocksRanges) {
  const int64_t expert = GateUpExpertBytes(4096, 1024);
  // 128 tiles an expert. 32 slots: 4,096 tiles, 32 a block; 40 slots: 5,120 tiles, 39 a block.
  EXPECT_TRUE(TokenWindowsPay(PerSlot(4, 8, 1024, 32, expert)));
  EXPECT_FALSE(TokenWindowsPay(PerSlot(5, 8, 1024, 40, expert)));
}

TEST(TokenWindowsTest, OnlyWholeTokenWindowsOfSlotGroups) {
  const int64_t expert = GateUpExpertBytes(4096, 1024);
  TokenWindowCase c = PerSlot(4, 8, 1024, 32, expert);
  ASSERT_TRUE(TokenWindowsPay(c));
  TokenWindowCase not_slots = c;
  not_slots.slots_are_groups = false;
  EXPECT_FALSE(TokenWindowsPay(not_slots));
  TokenWindowCase one_selected = PerSlot(32, 1, 1024, 32, expert);
  EXPECT_FALSE(TokenWindowsPay(one_selected));
  TokenWindowCase partial = c;
  partial.groups = 31;  // not a whole number of tokens
  EXPECT_FALSE(TokenWindowsPay(partial));
}

// Serving geometry: 1.84 MB an expert, so from 52 distinct experts (94.4 MB, 3/2 of the 60 MiB
// L2) on: t = 6 union 60, t = 8 unions 60-80; not t = 6 union 50 nor t = 8 union 50.
TEST(EarlyStartTest, PaysFromThreeHalvesOfTheL2OfDistinctExperts) {
  const int64_t expert = GateUpExpertBytes(2560, 640);
  for (int distinct = 1; distinct <= 80; ++distinct) {
    EXPECT_EQ(EarlyStartPays(true, false, distinct * expert, kH200L2Bytes), distinct >= 52)
        << "distinct=" << distinct;
  }
  const int64_t large = GateUpExpertBytes(4096, 1024);  // 4.72 MB: unions 24 and 32, not 8 or 16
  EXPECT_FALSE(EarlyStartPays(true, false, 16 * large, kH200L2Bytes));
  EXPECT_TRUE(EarlyStartPays(true, false, 24 * large, kH200L2Bytes));
}

// The kernel derives a staged row's input row from its group: only where group g is slot g and
// the blocks stage their groups' rows (not every input row, as blocks spanning more groups than
// there are tokens do).
TEST(EarlyStartTest, OnlyPlansWhoseStagedRowsAreTheirGroups) {
  const int64_t expert = GateUpExpertBytes(2560, 640);
  EXPECT_TRUE(EarlyStartPays(true, false, 60 * expert, kH200L2Bytes));
  EXPECT_FALSE(EarlyStartPays(false, false, 60 * expert, kH200L2Bytes));
  EXPECT_FALSE(EarlyStartPays(true, true, 60 * expert, kH200L2Bytes));
}

// The union variant's gate+up at the serving geometry (hidden 2,560, one input row per token):
// from t = 5 on; and 256 / 4096 at t = 4.
TEST(ClusterKHalvesTest, PayWhereEveryBlockStagesAtLeast12800Inputs) {
  for (int t = 1; t <= 8; ++t) EXPECT_EQ(ClusterKHalvesPay(t, 2560), t >= 5) << "t=" << t;
  EXPECT_TRUE(ClusterKHalvesPay(4, 4096));
  EXPECT_FALSE(ClusterKHalvesPay(3, 4096));
}

}  // namespace
}  // namespace gpuprobe
