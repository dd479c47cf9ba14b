#include "kernels/sel/launch_plan.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "kernels/sel/smem_layout.h"
#include "kernels/sel/tuning.h"

namespace gpuprobe::sel {
namespace {

// The H200 as the CUDA runtime reports it (132 SMs, 60 MiB of L2, 227 KiB of opt-in shared
// memory per block).
constexpr SelDevice kH200{.sms = 132, .l2_bytes = 62914560, .max_smem_bytes = 232448};

// The gate+up launch of the serving geometry (512 experts, hidden 2560, ff 640, selected 10) at
// t = 6: `groups` groups of at most `widest_group` slots (1: the per-slot plans).
SelWork GateUp(int groups, int widest_group) {
  const bool one_slot = widest_group == 1;
  return {.one_slot = one_slot,
          .tiles = groups * 640 / 8,
          .tiles_per_group = 640 / 8,
          .cols = 2560,
          .per_thread = Tuning<true, true>::kChunksPerThread,
          .octets = Tuning<true, true>::kOctets,
          .stages = one_slot ? Tuning<true, true>::kStages : Tuning<true, false>::kStages,
          .staged_cols = widest_group,
          .input_rows = 6};
}
SelWork PerSlotGateUp(int slots) { return GateUp(slots, 1); }

TEST(PlanLaunchTest, OneBlockPerSmWhoseRangesCoverEveryTileAndFitTheCard) {
  for (const SelDevice card :
       {kH200, SelDevice{.sms = 114, .l2_bytes = 52428800, .max_smem_bytes = 232448}}) {
    const absl::StatusOr<LaunchPlan> plan = PlanLaunch(PerSlotGateUp(60), card, 0);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->blocks, card.sms);
    EXPECT_LE(plan->warps, kMaxWarps);
    EXPECT_EQ(plan->splits, 1);
    // Every tile has a warp in some round: the blocks' warps times their rounds cover the tiles.
    const int per_block = (4800 + card.sms - 1) / card.sms;
    EXPECT_GE(plan->warps * ((per_block + plan->warps - 1) / plan->warps), per_block);
    EXPECT_LE(plan->smem_bytes, card.max_smem_bytes);
    EXPECT_EQ(plan->smem_bytes,
              SmemBytes(true, 2560, plan->staged_rows, plan->groups_per_block, 1, plan->warps,
                        plan->splits, Tuning<true, true>::kStages,
                        Tuning<true, true>::kChunksPerThread, Tuning<true, true>::kOctets));
  }
}

TEST(PlanLaunchTest, FewTilesSplitKAcrossWarpsSoThatEverySmStreams) {
  // t = 1 with two slots: 160 tiles on 132 SMs, so each block's two tiles take K splits.
  SelWork work = PerSlotGateUp(2);
  work.input_rows = 1;
  const absl::StatusOr<LaunchPlan> plan = PlanLaunch(work, kH200, 0);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_GT(plan->splits, 1);
  EXPECT_LE(plan->splits, kMaxSplits);
  EXPECT_EQ(plan->warps % plan->splits, 0);
  // The splits cover K: 80 chunks of 32 inputs.
  EXPECT_GE(plan->splits * plan->chunks_per_split, 2560 / kChunkElements);
}

// The per-slot down of the serving geometry at `slots` slots: items of 32 rows, so hidden / 32
// tiles a group.
SelWork PerSlotDown(int slots, int input_rows) {
  return {.one_slot = true,
          .tiles = slots * 2560 / 32,
          .tiles_per_group = 2560 / 32,
          .cols = 640,
          .per_thread = Tuning<false, true, kPerSlotDownOctets>::kChunksPerThread,
          .octets = Tuning<false, true, kPerSlotDownOctets>::kOctets,
          .stages = Tuning<false, true, kPerSlotDownOctets>::kStages,
          .staged_cols = 1,
          .input_rows = input_rows};
}

TEST(PlanLaunchTest, TheWideDownFitsNineteenWarpsAtTSixAndSplitsKAtTOne) {
  // t = 6: 4,800 tiles of 32 rows, 37 a block, in two rounds of at most 20 warps whose rings
  // (3 stages of 4 octets x 32 lanes x 20 bytes) fit beside the staged rows.
  const absl::StatusOr<LaunchPlan> t6 = PlanLaunch(PerSlotDown(60, 60), kH200, 0);
  ASSERT_TRUE(t6.ok()) << t6.status();
  EXPECT_EQ(t6->splits, 1);
  EXPECT_EQ(t6->warps, 19);
  EXPECT_EQ(StageBytes(1, 4), 2560);
  EXPECT_EQ(t6->smem_bytes,
            SmemBytes(true, 640, t6->staged_rows, t6->groups_per_block, 1, t6->warps, 1, 3, 1, 4));
  EXPECT_LE(t6->smem_bytes, kH200.max_smem_bytes);
  // t = 1: 800 tiles, 7 a block, each tile's K split in two (3 passes and 2).
  const absl::StatusOr<LaunchPlan> t1 = PlanLaunch(PerSlotDown(10, 10), kH200, 0);
  ASSERT_TRUE(t1.ok()) << t1.status();
  EXPECT_EQ(t1->splits, 2);
  EXPECT_EQ(t1->warps, 14);
  EXPECT_EQ(t1->chunks_per_split, 12);
}

TEST(PlanLaunchTest, TheCardsSharedMemoryLimitIsTheOneItReports) {
  // Union 10 with groups of 8 slots: at the H200's 227 KiB a block stages its rows beside 14
  // warps' rings; a card that offers 100 KiB gets fewer warps, one that offers 48 KiB none.
  const absl::StatusOr<LaunchPlan> h200 = PlanLaunch(GateUp(10, 8), kH200, 0);
  ASSERT_TRUE(h200.ok()) << h200.status();
  SelDevice smaller = kH200;
  smaller.max_smem_bytes = 100 * 1024;
  const absl::StatusOr<LaunchPlan> fewer = PlanLaunch(GateUp(10, 8), smaller, 0);
  ASSERT_TRUE(fewer.ok()) << fewer.status();
  EXPECT_LE(fewer->smem_bytes, smaller.max_smem_bytes);
  EXPECT_LT(fewer->warps, h200->warps);
  smaller.max_smem_bytes = 48 * 1024;
  const absl::StatusOr<LaunchPlan> none = PlanLaunch(GateUp(10, 8), smaller, 0);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("2560 inputs x 8 slots per group do not fit the 48 KiB"),
            std::string::npos)
      << none.status();
}

TEST(PlanClusterHalvesTest, TheUnionGateUpAtUnion10TakesClustersOfTwoOnAnEvenCard) {
  // Union 10 at t = 6: 10 groups of 6 slots, every input row staged in every block.
  const std::optional<LaunchPlan> plan = PlanClusterHalves(GateUp(10, 6), kH200);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->blocks, 132);
  EXPECT_EQ(plan->warps, (800 + 65) / 66);  // one warp per tile of a cluster's range
  EXPECT_TRUE(plan->all_input_rows);
  EXPECT_EQ(plan->staged_rows, 6);
  // Each block stages and computes half of K.
  EXPECT_EQ(plan->chunks_per_split, 40);
  EXPECT_LE(plan->smem_bytes, kH200.max_smem_bytes);
}

TEST(PlanClusterHalvesTest, NoneOnAnOddCardForPerSlotPlansOrWherePairsDoNotPay) {
  SelDevice odd = kH200;
  odd.sms = 133;
  EXPECT_FALSE(PlanClusterHalves(GateUp(10, 6), odd).has_value());
  EXPECT_FALSE(PlanClusterHalves(PerSlotGateUp(60), kH200).has_value());
  SelWork few_inputs = GateUp(10, 6);
  few_inputs.input_rows = 2;  // 5,120 staged inputs: below kClusterKHalvesMinStagedInputs
  EXPECT_FALSE(PlanClusterHalves(few_inputs, kH200).has_value());
}

}  // namespace
}  // namespace gpuprobe::sel
