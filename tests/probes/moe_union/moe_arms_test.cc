#include "server/probes/moe_union/moe_arms.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

TEST(FloorExpertsTest, TheFloorReadsEverySlotsExpertAndFloorDistinctEachExpertOnce) {
  const std::vector<int32_t> sel = {7, 3, 7, 9, 3, 7};
  EXPECT_THAT(FloorExperts(KernelVariant::kFloor, sel), testing::ElementsAreArray(sel));
  EXPECT_THAT(FloorExperts(KernelVariant::kFloorDistinct, sel), testing::ElementsAre(7, 3, 9));
  EXPECT_THAT(FloorExperts(KernelVariant::kFloorDistinct, {}), testing::IsEmpty());
}

TEST(FloorExpertsTest, OnlyTheTwoReadsAreFloors) {
  EXPECT_TRUE(IsFloor(KernelVariant::kFloor));
  EXPECT_TRUE(IsFloor(KernelVariant::kFloorDistinct));
  EXPECT_FALSE(IsFloor(KernelVariant::kPerSlot));
  EXPECT_FALSE(IsFloor(KernelVariant::kUnion));
  EXPECT_EQ(VariantName(KernelVariant::kFloorDistinct), "floor-distinct");
}

}  // namespace
}  // namespace gpuprobe
