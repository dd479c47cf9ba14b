#include "server/probes/moe_union/sweep_spec.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/probes/moe_union/small_sweep.h"

namespace gpuprobe {
namespace {

using testing::AllOf;
using testing::HasSubstr;

v1::SweepRequest Small() { return SmallSweepRequest(); }

void SetList(google::protobuf::RepeatedField<uint32_t>* list, std::vector<uint32_t> values) {
  list->Clear();
  for (uint32_t v : values) list->Add(v);
}

std::string Refusal(const v1::SweepRequest& o) {
  absl::StatusOr<SweepSpec> spec = ResolveSweep(o, SweepLimits{});
  EXPECT_FALSE(spec.ok());
  if (spec.ok()) return "";
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(spec.status().message());
}

TEST(ResolveSweepTest, DefaultsAreTheServingGeometry) {
  absl::StatusOr<SweepSpec> spec = ResolveSweep(v1::SweepRequest{}, SweepLimits{});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->geometry, (MoeGeometry{512, 2560, 640, 10}));
  EXPECT_EQ(spec->t_values, (std::vector<int>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(spec->reps, 20);
  EXPECT_EQ(spec->timing, TimingMode::kEvents);
  EXPECT_EQ(spec->cache, CacheMode::kWarm);
  EXPECT_EQ(spec->variants, std::vector<KernelVariant>{KernelVariant::kPerSlot});
  EXPECT_EQ(ExpandArms(*spec).size(), 21u);  // 1 + 2 + ... + 6
}

TEST(ResolveSweepTest, DefaultLadderIsSelectedStepsUpToSlots) {
  absl::StatusOr<SweepSpec> spec = ResolveSweep(Small(), SweepLimits{});
  ASSERT_TRUE(spec.ok());
  const std::vector<Arm> arms = ExpandArms(*spec);
  const std::vector<Arm> expected = {
      {KernelVariant::kPerSlot, 1, 4, 4},  {KernelVariant::kPerSlot, 2, 8, 4},
      {KernelVariant::kPerSlot, 2, 8, 8},  {KernelVariant::kPerSlot, 3, 12, 4},
      {KernelVariant::kPerSlot, 3, 12, 8}, {KernelVariant::kPerSlot, 3, 12, 12}};
  EXPECT_EQ(arms, expected);
}

TEST(ResolveSweepTest, LadderIsCappedAtExperts) {
  v1::SweepRequest o = Small();
  o.mutable_geometry()->set_experts(10);
  absl::StatusOr<SweepSpec> spec = ResolveSweep(o, SweepLimits{});
  ASSERT_TRUE(spec.ok());
  std::vector<int> t3_unions;
  for (const Arm& a : ExpandArms(*spec)) {
    if (a.t == 3) t3_unions.push_back(a.union_size);
  }
  EXPECT_EQ(t3_unions, (std::vector<int>{4, 8, 10}));
}

TEST(ResolveSweepTest, ExplicitListsOverrideTheLadder) {
  v1::SweepRequest o = Small();
  SetList(o.mutable_t_values(), {3, 1, 3});
  SetList(o.mutable_unions(), {4});
  absl::StatusOr<SweepSpec> spec = ResolveSweep(o, SweepLimits{});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->t_values, (std::vector<int>{1, 3}));
  EXPECT_EQ(ExpandArms(*spec).size(), 2u);
}

TEST(ResolveSweepTest, WidthsMustBeMultiplesOf16) {
  v1::SweepRequest o = Small();
  o.mutable_geometry()->set_hidden(500);
  EXPECT_THAT(Refusal(o), AllOf(HasSubstr("hidden"), HasSubstr("500"), HasSubstr("16")));
  o = Small();
  o.mutable_geometry()->set_ff(100);
  EXPECT_THAT(Refusal(o), AllOf(HasSubstr("ff"), HasSubstr("100"), HasSubstr("16")));
}

TEST(ResolveSweepTest, SelectedMustFitTheExperts) {
  v1::SweepRequest o = Small();
  o.mutable_geometry()->set_selected(0);
  EXPECT_THAT(Refusal(o), AllOf(HasSubstr("selected"), HasSubstr("0")));
  o.mutable_geometry()->set_selected(65);
  EXPECT_THAT(Refusal(o), AllOf(HasSubstr("selected"), HasSubstr("65"), HasSubstr("experts=64")));
}

TEST(ResolveSweepTest, UnionsMustLieBetweenSelectedAndSlotsAndExperts) {
  v1::SweepRequest o = Small();
  SetList(o.mutable_unions(), {3});
  EXPECT_THAT(Refusal(o), AllOf(HasSubstr("unions"), HasSubstr("3"), HasSubstr("selected=4")));
  SetList(o.mutable_unions(), {13});  // t = 3, the largest, has 12 slots
  EXPECT_THAT(Refusal(o), AllOf(HasSubstr("unions"), HasSubstr("13"), HasSubstr("t=3")));
  SetList(o.mutable_unions(), {8});  // fits t = 2 and 3, but t = 1 has only 4 slots
  EXPECT_THAT(Refusal(o), AllOf(HasSubstr("t_values"), HasSubstr("no union"), HasSubstr("t=1")));
}

TEST(ResolveSweepTest, EachUnionIsMeasuredAtEveryTWhereItFits) {
  v1::SweepRequest o = Small();
  SetList(o.mutable_t_values(), {1, 3});
  SetList(o.mutable_unions(), {12, 4});
  absl::StatusOr<SweepSpec> spec = ResolveSweep(o, SweepLimits{});
  ASSERT_TRUE(spec.ok()) << spec.status();
  const std::vector<Arm> expected = {{KernelVariant::kPerSlot, 1, 4, 4},
                                     {KernelVariant::kPerSlot, 3, 12, 4},
                                     {KernelVariant::kPerSlot, 3, 12, 12}};
  EXPECT_EQ(ExpandArms(*spec), expected);
}

TEST(ResolveSweepTest, TAndRepsHaveLowerBounds) {
  v1::SweepRequest o = Small();
  o.set_t_max(0);
  EXPECT_THAT(Refusal(o), HasSubstr("t_max: 0 is outside [1, 128]"));
  o = Small();
  SetList(o.mutable_t_values(), {2, 0});
  EXPECT_THAT(Refusal(o), HasSubstr("t_values"));
  o = Small();
  o.set_reps(1);
  EXPECT_THAT(Refusal(o), AllOf(HasSubstr("reps"), HasSubstr("1"), HasSubstr("[2,")));
}

TEST(ResolveSweepTest, UpperBoundsKeepRequestsSane) {
  v1::SweepRequest o = Small();
  o.mutable_geometry()->set_experts(1'000'000);
  EXPECT_THAT(Refusal(o), AllOf(HasSubstr("experts"), HasSubstr("8192")));
  o = Small();
  o.mutable_geometry()->set_hidden(1 << 20);
  EXPECT_THAT(Refusal(o), AllOf(HasSubstr("hidden"), HasSubstr("65536")));
  o = Small();
  o.set_reps(10000);
  o.set_t_max(40);
  o.mutable_geometry()->set_experts(4096);
  EXPECT_THAT(Refusal(o), HasSubstr("reps"));  // 820 arms x 10000 reps
  o = Small();
  (*o.mutable_labels())["k"] = std::string(300, 'v');
  EXPECT_THAT(Refusal(o), HasSubstr("labels"));
}

TEST(ResolveSweepTest, SamplingUntilPreciseIsBoundedAndNeedsItsPrecision) {
  v1::SweepRequest o = Small();
  o.set_precision(0.005);
  absl::StatusOr<SweepSpec> spec = ResolveSweep(o, SweepLimits{});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->precision, 0.005);
  EXPECT_EQ(spec->max_seconds, kDefaultMaxSeconds);
  // 6 arms: the rep bound is the limits' reps, not arm-reps over arms.
  EXPECT_EQ(MostReps(*spec, SweepLimits{}), SweepLimits{}.max_reps);
  o.set_max_seconds(8);
  spec = ResolveSweep(o, SweepLimits{});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->max_seconds, 8);

  o.set_precision(0.00001);
  EXPECT_THAT(Refusal(o), AllOf(HasSubstr("precision: "), HasSubstr("is outside [0.0001, 0.5]")));
  o.set_precision(0.7);
  EXPECT_THAT(Refusal(o), HasSubstr("precision: 0.7"));
  o.set_precision(0.01);
  o.set_max_seconds(0);
  EXPECT_THAT(Refusal(o), HasSubstr("max_seconds: 0 is outside (0, 86400]"));
  o.set_max_seconds(1e6);
  EXPECT_THAT(Refusal(o), HasSubstr("max_seconds: 1e+06 is outside (0, 86400]"));
  o.clear_precision();
  o.set_max_seconds(5);
  EXPECT_THAT(Refusal(o), HasSubstr("max_seconds: bounds sampling until precise; give precision"));
}

TEST(MostRepsTest, ManyArmsShareTheArmRepBound) {
  v1::SweepRequest o = Small();
  o.mutable_geometry()->set_experts(4096);
  o.set_t_max(40);
  o.set_reps(3);
  absl::StatusOr<SweepSpec> spec = ResolveSweep(o, SweepLimits{});
  ASSERT_TRUE(spec.ok()) << spec.status();
  const int arms = static_cast<int>(ExpandArms(*spec).size());
  EXPECT_EQ(MostReps(*spec, SweepLimits{}), SweepLimits{}.max_arm_reps / arms);
}

TEST(EstimateDeviceBytesTest, CountsBanksOfEveryExpertTwiceTheMovedTensorAndArmBuffers) {
  absl::StatusOr<SweepSpec> spec = ResolveSweep(v1::SweepRequest{}, SweepLimits{});
  ASSERT_TRUE(spec.ok());
  const int64_t bytes = EstimateDeviceBytes(*spec, ExpandArms(*spec));
  const int64_t banks = int64_t{512} * (1'843'200 + 921'600);
  const int64_t moved = int64_t{512} * 1'843'200;  // the gate+up bank, the largest
  EXPECT_GT(bytes, 2 * banks + moved);
  EXPECT_LT(bytes, 2 * banks + moved + (64 << 20));
}

TEST(ResolveSweepTest, BlocksDefaultToOneAndAreBounded) {
  absl::StatusOr<SweepSpec> spec = ResolveSweep(v1::SweepRequest{}, SweepLimits{});
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->blocks, 1);
  for (uint32_t blocks : {0u, 65u, 4294967295u}) {
    v1::SweepRequest o;
    o.set_blocks(blocks);
    const absl::Status s = ResolveSweep(o, SweepLimits{}).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << blocks;
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("blocks: ", blocks, " is outside [1, 64]")))
        << blocks;
  }
  v1::SweepRequest o;
  o.set_blocks(4);
  o.set_reps(10);
  spec = ResolveSweep(o, SweepLimits{});
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->blocks, 4);
  // The bound on launch pairs counts every block's reps.
  SweepLimits l;
  l.max_arm_reps = static_cast<int64_t>(ExpandArms(*spec).size()) * 10 * 4 - 1;
  const absl::Status s = ResolveSweep(o, l).status();
  EXPECT_THAT(s.message(), HasSubstr("x 4 blocks"));
}

TEST(CheckLabelsTest, KeysFiltersCannotNameAndLineBreaksAreRefused) {
  EXPECT_TRUE(CheckLabels({{"branch", "main"}, {"commit", "a=b c"}}, SweepLimits{}).ok());
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"a=b", "1"},
                                                        {"a,b", "1"},
                                                        {"a\nb", "1"},
                                                        {std::string("a\0b", 3), "1"},
                                                        {"k", "v\nw"},
                                                        {"k", "a,b"},  // filters split at ','
                                                        {"k", "v\tw"},
                                                        {"k", std::string("v\0", 2)}}) {
    const absl::Status s = CheckLabels({{key, value}}, SweepLimits{});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << key << "=" << value;
    EXPECT_THAT(s.message(), HasSubstr("labels: key \"")) << key;
  }
}

}  // namespace
}  // namespace gpuprobe
