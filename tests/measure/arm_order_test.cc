#include "server/measure/arm_order.h"

#include <algorithm>
#include <numeric>

#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

std::vector<int> Identity(int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(ArmOrderTest, FixedIsTheSweepOrderEveryRep) {
  for (int rep = 0; rep < 5; ++rep)
    EXPECT_EQ(ArmOrderOfRep(ArmOrder::kFixed, 6, rep, 1), Identity(6));
}

TEST(ArmOrderTest, RotateStartsRepRAtArmRModN) {
  EXPECT_EQ(ArmOrderOfRep(ArmOrder::kRotate, 4, 0, 1), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(ArmOrderOfRep(ArmOrder::kRotate, 4, 1, 1), (std::vector<int>{1, 2, 3, 0}));
  EXPECT_EQ(ArmOrderOfRep(ArmOrder::kRotate, 4, 6, 1), (std::vector<int>{2, 3, 0, 1}));
}

TEST(ArmOrderTest, ShuffleIsAPermutationSeededByTheJobAndVariesByRep) {
  const std::vector<int> a = ArmOrderOfRep(ArmOrder::kShuffle, 21, 3, 7);
  std::vector<int> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, Identity(21));
  EXPECT_EQ(ArmOrderOfRep(ArmOrder::kShuffle, 21, 3, 7), a);  // recomputable
  EXPECT_NE(ArmOrderOfRep(ArmOrder::kShuffle, 21, 4, 7), a);
  EXPECT_NE(ArmOrderOfRep(ArmOrder::kShuffle, 21, 3, 8), a);
}

}  // namespace
}  // namespace gpuprobe
