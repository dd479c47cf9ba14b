#include "server/measure/statistics.h"

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

}  // namespace
}  // namespace gpuprobe
