#include "server/measure/comparison.h"

#include "common/seeded_rng.h"
#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

// `reps` samples around gate+up `gu` and down `down` us, each within +-noise (relative).
ArmSamples Noisy(double gu, double down, int reps, double noise, uint64_t seed) {
  SeededRng rng(seed);
  ArmSamples s;
  for (int i = 0; i < reps; ++i) {
    s.gu_us.push_back(gu * (1.0 + rng.Uniform(-noise, noise)));
    s.down_us.push_back(down * (1.0 + rng.Uniform(-noise, noise)));
  }
  return s;
}

TEST(ComparisonTest, TheSameDistributionIsSame) {
  const RatioEstimate r =
      CompareSections(Noisy(100, 50, 30, 0.01, 1), Noisy(100, 50, 30, 0.01, 2), {});
  EXPECT_NEAR(r.ratio, 1.0, 0.01);
  EXPECT_LE(r.low, r.ratio);
  EXPECT_GE(r.high, r.ratio);
  EXPECT_EQ(r.verdict, Verdict::kSame);
}

TEST(ComparisonTest, TwiceTheTimeIsSlowerAndHalfIsFaster) {
  const ArmSamples base = Noisy(100, 50, 20, 0.02, 1);
  const RatioEstimate slower = CompareSections(base, Noisy(200, 100, 20, 0.02, 3), {});
  EXPECT_NEAR(slower.ratio, 2.0, 0.05);
  EXPECT_EQ(slower.verdict, Verdict::kSlower);
  const RatioEstimate faster = CompareSections(base, Noisy(50, 25, 20, 0.02, 4), {});
  EXPECT_EQ(faster.verdict, Verdict::kFaster);
}

TEST(ComparisonTest, AGainSmallerThanTheNoiseIsUnsure) {
  // 3% slower with +-10% noise: the interval straddles the 2% threshold.
  const RatioEstimate r =
      CompareSections(Noisy(100, 50, 20, 0.10, 5), Noisy(103, 51.5, 20, 0.10, 6), {});
  EXPECT_EQ(r.verdict, Verdict::kUnsure);
  EXPECT_LT(r.low, 1.02);
  EXPECT_GT(r.high, 1.02);
}

TEST(ComparisonTest, FewerThanTenKeptRepsAreTooFew) {
  const RatioEstimate r =
      CompareSections(Noisy(100, 50, 9, 0.01, 1), Noisy(200, 100, 30, 0.01, 2), {});
  EXPECT_EQ(r.verdict, Verdict::kTooFewReps);
  EXPECT_NEAR(r.ratio, 2.0, 0.05);  // the ratio is still reported
}

TEST(ComparisonTest, TheSameInputsGiveTheSameInterval) {
  const ArmSamples a = Noisy(100, 50, 20, 0.05, 1), b = Noisy(104, 50, 20, 0.05, 2);
  const RatioEstimate first = CompareSections(a, b, {}), second = CompareSections(a, b, {});
  EXPECT_EQ(first.low, second.low);
  EXPECT_EQ(first.high, second.high);
}

}  // namespace
}  // namespace gpuprobe
