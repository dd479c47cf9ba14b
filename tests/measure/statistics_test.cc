#include "server/measure/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

TEST(SummarizeTest, OddCountTakesTheMiddleSample) {
  const SampleStats s = Summarize({5.0, 1.0, 3.0});
  EXPECT_EQ(s.median, 3.0);
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 5.0);
  EXPECT_DOUBLE_EQ(s.spread, 4.0 / 3.0);
}

TEST(SummarizeTest, EvenCountAveragesTheTwoMiddleSamples) {
  const SampleStats s = Summarize({4.0, 1.0, 2.0, 10.0});
  EXPECT_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.spread, 9.0 / 3.0);
}

TEST(SummarizeTest, OneSampleHasNoSpread) {
  const SampleStats s = Summarize({7.5});
  EXPECT_EQ(s.median, 7.5);
  EXPECT_EQ(s.spread, 0.0);
}

TEST(SummarizeTest, ZeroMedianGivesZeroSpreadNotInfinity) {
  EXPECT_EQ(Summarize({0.0, 0.0, 1.0}).spread, 0.0);
}

TEST(RelativeMedianHalfWidthTest, TakesTheOrderStatisticsAroundTheMedian) {
  std::vector<double> samples(100);
  std::iota(samples.begin(), samples.end(), 1.0);  // 1..100, median 50.5
  std::shuffle(samples.begin(), samples.end(), std::mt19937(7));
  // P(B <= 39) = 0.018 and P(B <= 40) = 0.028 for B ~ Binomial(100, 1/2), so k = 39: the 40th
  // and the 61st smallest.
  EXPECT_DOUBLE_EQ(RelativeMedianHalfWidth(samples), (61.0 - 40.0) / 2.0 / 50.5);
}

TEST(RelativeMedianHalfWidthTest, IsInfiniteWithoutEnoughSamplesOrWithAZeroMedian) {
  constexpr double kInfinite = std::numeric_limits<double>::infinity();
  std::vector<double> five = {1, 2, 3, 4, 5};
  EXPECT_EQ(RelativeMedianHalfWidth(five), kInfinite);
  std::vector<double> six = {1, 2, 3, 4, 5, 6};  // k = 0: [min, max]
  EXPECT_DOUBLE_EQ(RelativeMedianHalfWidth(six), (6.0 - 1.0) / 2.0 / 3.5);
  std::vector<double> zeros(10, 0.0);
  EXPECT_EQ(RelativeMedianHalfWidth(zeros), kInfinite);
}

// The claim the precision rule relies on, checked: over many draws of a skewed distribution
// with a known median, the sample median +- the half-width covers that median about 95% of the
// time (seeded, so the count is the same on every run).
TEST(RelativeMedianHalfWidthTest, CoversTheTrueMedianAboutNinetyFivePercentOfTheTime) {
  std::mt19937_64 rng(20261203);
  std::exponential_distribution<double> draw(1.0);
  const double true_median = std::log(2.0);
  constexpr int kTrials = 4000;
  for (const int n : {6, 12, 30, 100}) {
    int covered = 0;
    for (int trial = 0; trial < kTrials; ++trial) {
      std::vector<double> samples(n);
      for (double& s : samples) s = 1.0 + draw(rng);  // shifted so that the median is positive
      std::vector<double> sorted = samples;
      std::sort(sorted.begin(), sorted.end());
      const double median = 0.5 * (sorted[(n - 1) / 2] + sorted[n / 2]);
      const double half = RelativeMedianHalfWidth(samples) * median;
      if (std::abs(median - (1.0 + true_median)) <= half + 1e-12) ++covered;
    }
    const double coverage = static_cast<double>(covered) / kTrials;
    EXPECT_GE(coverage, 0.93) << "n = " << n;
    EXPECT_LE(coverage, 0.995) << "n = " << n;
  }
}

}  // namespace
}  // namespace gpuprobe
