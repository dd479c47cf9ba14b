#include "server/measure/comparison.h"

#include <cmath>
#include <tuple>
#include <vector>

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

// A standard normal draw (Box-Muller), from `rng`'s uniform draws.
double Normal(SeededRng& rng) {
  const double u = rng.Uniform(1e-12, 1.0), v = rng.Uniform(0.0, 1.0);
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * v);
}

TEST(ComparisonTest, StudentsTQuantilesMatchTheTables) {
  EXPECT_NEAR(StudentTQuantile(0.975, 1), 12.706, 0.001);
  EXPECT_NEAR(StudentTQuantile(0.975, 2), 4.303, 0.001);
  EXPECT_NEAR(StudentTQuantile(0.975, 7), 2.365, 0.001);
  EXPECT_NEAR(StudentTQuantile(0.995, 10), 3.169, 0.001);
  EXPECT_NEAR(StudentTQuantile(0.975, 1000), 1.962, 0.001);
  EXPECT_NEAR(StudentTQuantile(0.025, 7), -2.365, 0.001);
}

// Jobs of identical code whose values spread 1% between jobs: the history's 95% interval holds
// the true ratio (1) in 95% of candidates, and judges few of them slower or faster at 2%; a
// candidate 8% slower (a margin of 2.5 spreads over the threshold) is judged slower.
TEST(ComparisonTest, AHistoryIntervalCoversTheNoiseBetweenJobs) {
  SeededRng rng(7);
  const auto job = [&](double scale) { return 100.0 * scale * std::exp(0.01 * Normal(rng)); };
  constexpr int kTrials = 4000;
  int covered = 0, judged = 0, caught = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<double> base;
    for (int j = 0; j < 8; ++j) base.push_back(job(1.0));
    const RatioEstimate same = CompareWithHistory(base, job(1.0), {});
    covered += same.low <= 1.0 && 1.0 <= same.high;
    judged += same.verdict == Verdict::kSlower || same.verdict == Verdict::kFaster;
    caught += CompareWithHistory(base, job(1.08), {}).verdict == Verdict::kSlower;
  }
  EXPECT_NEAR(covered / static_cast<double>(kTrials), 0.95, 0.012);
  EXPECT_LT(judged / static_cast<double>(kTrials), 0.01);
  EXPECT_GT(caught / static_cast<double>(kTrials), 0.95);
}

// The within-job bootstrap knows nothing of the spread between jobs: its interval, narrow
// with many reps, misses the truth for most such candidates.
TEST(ComparisonTest, AWithinJobIntervalMissesTheNoiseBetweenJobs) {
  SeededRng rng(8);
  int covered = 0;
  constexpr int kTrials = 200;
  for (int trial = 0; trial < kTrials; ++trial) {
    const double base_job = std::exp(0.01 * Normal(rng)), cand_job = std::exp(0.01 * Normal(rng));
    const RatioEstimate r =
        CompareSections(Noisy(100 * base_job, 50 * base_job, 50, 0.001, trial),
                        Noisy(100 * cand_job, 50 * cand_job, 50, 0.001, trial + kTrials), {});
    covered += r.low <= 1.0 && 1.0 <= r.high;
  }
  EXPECT_LT(covered / static_cast<double>(kTrials), 0.5);
}

// Two jobs of B blocks each, each block on its own placement whose effect spreads 0.5%: the
// blocks' Welch interval holds the true ratio in at least 95% of pairs, at 3 blocks as at 8
// (with unequal spreads too), and a 5% slowdown is caught at a 1% threshold with 8 blocks.
TEST(ComparisonTest, ABlocksIntervalCoversTheNoiseBetweenPlacements) {
  SeededRng rng(9);
  const auto blocks = [&](int n, double scale, double spread) {
    std::vector<double> values;
    for (int b = 0; b < n; ++b) values.push_back(100.0 * scale * std::exp(spread * Normal(rng)));
    return values;
  };
  ComparisonOptions o;
  o.threshold = 0.01;
  constexpr int kTrials = 4000;
  for (const auto& [n, base_spread, cand_spread] : std::vector<std::tuple<int, double, double>>{
           {3, 0.005, 0.005}, {8, 0.005, 0.005}, {4, 0.002, 0.008}}) {
    int covered = 0, caught = 0;
    for (int trial = 0; trial < kTrials; ++trial) {
      const RatioEstimate same =
          CompareBlocks(blocks(n, 1.0, base_spread), blocks(n, 1.0, cand_spread), o);
      covered += same.low <= 1.0 && 1.0 <= same.high;
      caught +=
          CompareBlocks(blocks(n, 1.0, base_spread), blocks(n, 1.05, cand_spread), o).verdict ==
          Verdict::kSlower;
    }
    const double coverage = covered / static_cast<double>(kTrials);
    EXPECT_GT(coverage, 0.94) << n << " blocks: " << coverage;
    // No wider than it must be (Welch's df, rounded down, keeps it a little wide at 3 blocks).
    EXPECT_LT(coverage, 0.985) << n << " blocks: " << coverage;
    if (n == 8) {
      EXPECT_GT(caught / static_cast<double>(kTrials), 0.95);
    }
  }
}

TEST(ComparisonTest, FewerThanThreeBaselineJobsAreUnsureWithNoInterval) {
  const RatioEstimate r = CompareWithHistory({100.0, 101.0}, 150.0, {});
  EXPECT_EQ(r.verdict, Verdict::kUnsure);
  EXPECT_NEAR(r.ratio, 150.0 / std::sqrt(100.0 * 101.0), 1e-9);
  EXPECT_EQ(r.low, 0.0);
  EXPECT_EQ(r.high, 0.0);
}

}  // namespace
}  // namespace gpuprobe
