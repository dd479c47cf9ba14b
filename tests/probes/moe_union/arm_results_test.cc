#include "server/probes/moe_union/arm_results.h"

#include <algorithm>
#include <cmath>

#include "gtest/gtest.h"
#include "server/measure/statistics.h"
#include "server/probes/results.h"

namespace gpuprobe {
namespace {

SweepSpec Spec(std::vector<int64_t> unions) {
  v1::SweepRequest r;
  r.add_t_values(6);
  for (int64_t u : unions) r.add_unions(static_cast<uint32_t>(u));
  absl::StatusOr<SweepSpec> spec = ResolveSweep(r, SweepLimits{});
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

// What the measuring helper makes of each arm's gate+up and down samples: the measurement and a
// result per arm with its two metrics.
struct Measured {
  Measurement measurement;
  std::vector<v1::Result> results;

  explicit Measured(const std::vector<ArmSamples>& samples) {
    for (const ArmSamples& arm : samples) {
      measurement.samples.push_back({arm.gu_us, arm.down_us});
      v1::Result& r = results.emplace_back();
      *r.add_metrics() = MetricOf("gu_us", "us", arm.gu_us);
      *r.add_metrics() = MetricOf("down_us", "us", arm.down_us);
    }
  }
};

double DerivedOf(const v1::Result& r, const std::string& name) {
  for (const v1::DerivedValue& d : r.derived()) {
    if (d.name() == name) return d.value();
  }
  return std::nan("");
}

TEST(DeriveArmValuesTest, BandwidthColumnsFollowTheSeedsFormulas) {
  const SweepSpec spec = Spec({10, 60});
  const std::vector<Arm> arms = ExpandArms(spec);
  ASSERT_EQ(arms.size(), 2u);
  Measured m({{{30.0, 32.0, 31.0}, {15.0, 16.0}}, {{40.0}, {20.0}}});
  DeriveArmValues(spec, arms, {{10 * 1843200, 7}, {60 * 1843200, 8}}, m.measurement, m.results);
  const v1::Result& r = m.results[0];
  // gu_BW = n * 1,843,200 B / gu_us / 1e6.
  EXPECT_DOUBLE_EQ(DerivedOf(r, "gu_bw_vs_union_tbps"), 10 * 1843200.0 / 31.0 / 1e6);
  EXPECT_DOUBLE_EQ(DerivedOf(r, "gu_bw_vs_slots_tbps"), 60 * 1843200.0 / 31.0 / 1e6);
  EXPECT_DOUBLE_EQ(DerivedOf(r, "section_us"), 31.0 + 15.5);
  EXPECT_EQ(DerivedOf(r, "gu_read_bytes"), 10 * 1843200.0);
  EXPECT_EQ(DerivedOf(r, "down_read_bytes"), 7.0);
  // Reference: t = 6, union = slots = 60.
  EXPECT_DOUBLE_EQ(DerivedOf(m.results[1], "vs_reference"), 1.0);
  EXPECT_DOUBLE_EQ(DerivedOf(r, "vs_reference"), 60.0 / 46.5);
}

TEST(DeriveArmValuesTest, NoReferenceRowMeansNoRatioAndNoVerdict) {
  const SweepSpec spec = Spec({10});
  Measured m({{{30.0}, {15.0}}});
  DeriveArmValues(spec, ExpandArms(spec), {{1, 1}}, m.measurement, m.results);
  EXPECT_TRUE(std::isnan(DerivedOf(m.results[0], "vs_reference")));
  EXPECT_TRUE(std::isnan(DerivedOf(m.results[0], "vs_reference_low")));
  EXPECT_EQ(m.results[0].verdict(), v1::VERDICT_UNSPECIFIED);
  EXPECT_DOUBLE_EQ(DerivedOf(m.results[0], "section_us"), 45.0);
}

// `reps` samples of `us` each, spread +-2% deterministically.
std::vector<double> Around(double us, int reps) {
  std::vector<double> v;
  for (int i = 0; i < reps; ++i) v.push_back(us * (0.98 + 0.04 * i / std::max(1, reps - 1)));
  return v;
}

TEST(DeriveArmValuesTest, ArmsCarryAnIntervalAndAVerdictAgainstTheReference) {
  const SweepSpec spec = Spec({10, 60});
  const std::vector<Arm> arms = ExpandArms(spec);
  // Arm 0 takes half the reference's time; arm 1 is the reference.
  Measured m({{Around(20, 19), Around(10, 19)}, {Around(40, 19), Around(20, 19)}});
  DeriveArmValues(spec, arms, {{1, 1}, {1, 1}}, m.measurement, m.results);
  const v1::Result& r = m.results[0];
  EXPECT_EQ(r.verdict(), v1::VERDICT_FASTER);
  EXPECT_LE(DerivedOf(r, "vs_reference_low"), DerivedOf(r, "vs_reference"));
  EXPECT_GE(DerivedOf(r, "vs_reference_high"), DerivedOf(r, "vs_reference"));
  EXPECT_GT(DerivedOf(r, "vs_reference_low"), 1.5);
  EXPECT_EQ(m.results[1].verdict(), v1::VERDICT_SAME);
  // Under 10 kept reps nothing is judged.
  Measured few({{Around(20, 5), Around(10, 5)}, {Around(40, 5), Around(20, 5)}});
  DeriveArmValues(spec, arms, {{1, 1}, {1, 1}}, few.measurement, few.results);
  EXPECT_EQ(few.results[0].verdict(), v1::VERDICT_TOO_FEW_REPS);
}

}  // namespace
}  // namespace gpuprobe
