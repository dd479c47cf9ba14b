#include "server/probe/arm_rows.h"

#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

TEST(BuildRowsTest, BandwidthColumnsFollowTheSeedsFormulas) {
  SweepOptions o;
  o.t_values = {6};
  o.unions = {10, 60};
  absl::StatusOr<SweepSpec> spec = ResolveSweep(o, SweepLimits{});
  ASSERT_TRUE(spec.ok());
  const std::vector<Arm> arms = ExpandArms(*spec);
  ASSERT_EQ(arms.size(), 2u);
  const std::vector<ArmSamples> samples = {{{30.0, 32.0, 31.0}, {15.0, 16.0}},
                                           {{40.0}, {20.0}}};
  const std::vector<ArmRow> rows = BuildRows(*spec, arms, samples, "dev");
  // gu_BW = n * 1,843,200 B / gu_us / 1e6.
  EXPECT_DOUBLE_EQ(rows[0].gu_bw_vs_union_tbps, 10 * 1843200.0 / 31.0 / 1e6);
  EXPECT_DOUBLE_EQ(rows[0].gu_bw_vs_slots_tbps, 60 * 1843200.0 / 31.0 / 1e6);
  EXPECT_DOUBLE_EQ(rows[0].section_us, 31.0 + 15.5);
  // Reference: t = 6, union = slots = 60.
  EXPECT_DOUBLE_EQ(*rows[1].vs_reference, 1.0);
  EXPECT_DOUBLE_EQ(*rows[0].vs_reference, 60.0 / 46.5);
  EXPECT_EQ(rows[0].device, "dev");
}

TEST(BuildRowsTest, NoReferenceRowMeansNoRatio) {
  SweepOptions o;
  o.t_values = {6};
  o.unions = {10};
  absl::StatusOr<SweepSpec> spec = ResolveSweep(o, SweepLimits{});
  ASSERT_TRUE(spec.ok());
  const std::vector<ArmRow> rows =
      BuildRows(*spec, ExpandArms(*spec), {{{30.0}, {15.0}}}, "dev");
  EXPECT_FALSE(rows[0].vs_reference.has_value());
}

}  // namespace
}  // namespace gpuprobe
