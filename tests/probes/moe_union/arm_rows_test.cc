#include "server/probes/moe_union/arm_rows.h"

#include <algorithm>

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
  const std::vector<ArmSamples> samples = {{{30.0, 32.0, 31.0}, {15.0, 16.0}}, {{40.0}, {20.0}}};
  const std::vector<ArmReadBytes> reads = {{10 * 1843200, 0}, {60 * 1843200, 0}};
  const std::vector<ArmRow> rows =
      BuildRows(*spec, arms, samples, reads, {.device = "dev", .calibrated_read_tbps = 2.0});
  // gu_BW = n * 1,843,200 B / gu_us / 1e6.
  EXPECT_DOUBLE_EQ(rows[0].gu_bw_vs_union_tbps, 10 * 1843200.0 / 31.0 / 1e6);
  EXPECT_DOUBLE_EQ(rows[0].gu_bw_vs_slots_tbps, 60 * 1843200.0 / 31.0 / 1e6);
  EXPECT_DOUBLE_EQ(rows[0].section_us, 31.0 + 15.5);
  // Reference: t = 6, union = slots = 60.
  EXPECT_DOUBLE_EQ(*rows[1].vs_reference, 1.0);
  EXPECT_DOUBLE_EQ(*rows[0].vs_reference, 60.0 / 46.5);
  EXPECT_EQ(rows[0].device, "dev");
  // Achieved bandwidth of the bytes read, as a share of the calibrated 2 TB/s.
  EXPECT_DOUBLE_EQ(rows[0].gu_pct_of_read_bw, 100.0 * (10 * 1843200.0 / 31.0 / 1e6) / 2.0);
}

TEST(BuildRowsTest, NoReferenceRowMeansNoRatio) {
  SweepOptions o;
  o.t_values = {6};
  o.unions = {10};
  absl::StatusOr<SweepSpec> spec = ResolveSweep(o, SweepLimits{});
  ASSERT_TRUE(spec.ok());
  const std::vector<ArmRow> rows =
      BuildRows(*spec, ExpandArms(*spec), {{{30.0}, {15.0}}}, {{1, 1}}, {.device = "dev"});
  EXPECT_FALSE(rows[0].vs_reference.has_value());
  EXPECT_EQ(rows[0].gu_pct_of_read_bw, 0.0);  // no calibration, no percentage
}

}  // namespace
}  // namespace gpuprobe

namespace gpuprobe {
namespace {

// `reps` samples of `us` each, spread +-2% deterministically.
std::vector<double> Around(double us, int reps) {
  std::vector<double> v;
  for (int i = 0; i < reps; ++i) v.push_back(us * (0.98 + 0.04 * i / std::max(1, reps - 1)));
  return v;
}

TEST(BuildRowsTest, RowsCarryIntervalsAndAVerdictAgainstTheReference) {
  SweepOptions o;
  o.t_values = {6};
  o.unions = {10, 60};
  absl::StatusOr<SweepSpec> spec = ResolveSweep(o, SweepLimits{});
  ASSERT_TRUE(spec.ok());
  const std::vector<Arm> arms = ExpandArms(*spec);
  // Arm 0 takes half the reference's time; arm 1 is the reference.
  const std::vector<ArmSamples> samples = {{Around(20, 19), Around(10, 19)},
                                           {Around(40, 19), Around(20, 19)}};
  const std::vector<ArmRow> rows = BuildRows(*spec, arms, samples, {{1, 1}, {1, 1}}, {});
  for (const ArmRow& row : rows) {
    EXPECT_LE(row.gu_interval.low, row.gu.median);
    EXPECT_GE(row.gu_interval.high, row.gu.median);
    EXPECT_LE(row.down_interval.low, row.down.median);
    EXPECT_GE(row.down_interval.high, row.down.median);
  }
  ASSERT_TRUE(rows[0].verdict.has_value());
  EXPECT_EQ(*rows[0].verdict, Verdict::kFaster);
  EXPECT_LE(rows[0].vs_reference_interval.low, *rows[0].vs_reference);
  EXPECT_GE(rows[0].vs_reference_interval.high, *rows[0].vs_reference);
  EXPECT_GT(rows[0].vs_reference_interval.low, 1.5);
  EXPECT_EQ(*rows[1].verdict, Verdict::kSame);
  // Under 10 kept reps nothing is judged.
  const std::vector<ArmSamples> few = {{Around(20, 5), Around(10, 5)},
                                       {Around(40, 5), Around(20, 5)}};
  EXPECT_EQ(*BuildRows(*spec, arms, few, {{1, 1}, {1, 1}}, {})[0].verdict, Verdict::kTooFewReps);
}

TEST(BuildRowsTest, WithoutAReferenceRowThereIsNoVerdict) {
  SweepOptions o;
  o.t_values = {6};
  o.unions = {10};
  absl::StatusOr<SweepSpec> spec = ResolveSweep(o, SweepLimits{});
  ASSERT_TRUE(spec.ok());
  const std::vector<ArmRow> rows =
      BuildRows(*spec, ExpandArms(*spec), {{Around(30, 12), Around(15, 12)}}, {{1, 1}}, {});
  EXPECT_FALSE(rows[0].verdict.has_value());
}

}  // namespace
}  // namespace gpuprobe
