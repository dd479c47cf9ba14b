// What the kernel probe adds to its results: the impossible-time flag at the calibrated read
// (warm: beyond the L2; cold: every byte), each candidate's ratio to its baseline with its
// interval and verdict (by blocks from 3, else by reps), and the code hash of an arm.
#include "server/probes/kernel/kernel_results.h"

#include <cmath>
#include <random>

#include "common/result_values.h"
#include "common/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;

// 4 TB/s, a 50 MB L2.
const DeviceDetails kDevice{.l2_bytes = 50'000'000, .calibrated_read_tbps = 4.0};

TEST(KernelResultsTest, ATimeFasterThanTheDeclaredReadIsImpossible) {
  // 450 MB beyond the L2 takes 112.5 us at 4 TB/s.
  EXPECT_EQ(ImpossibleTime(113.0, 500'000'000, CacheMode::kWarm, kDevice), "");
  EXPECT_EQ(ImpossibleTime(108.0, 500'000'000, CacheMode::kWarm, kDevice), "");  // within 5%
  const std::string flag = ImpossibleTime(100.0, 500'000'000, CacheMode::kWarm, kDevice);
  EXPECT_THAT(flag, HasSubstr("450000000 bytes that must come from device memory"));
  EXPECT_THAT(flag, HasSubstr("at least 112 us at the calibrated 4.00 TB/s"));
  // Cold: every byte comes from memory (125 us).
  EXPECT_NE(ImpossibleTime(115.0, 500'000'000, CacheMode::kCold, kDevice), "");
  // What fits in the L2 may be read at any speed; nothing declared, nothing known.
  EXPECT_EQ(ImpossibleTime(0.01, 40'000'000, CacheMode::kWarm, kDevice), "");
  EXPECT_EQ(ImpossibleTime(0.01, 0, CacheMode::kCold, kDevice), "");
  EXPECT_EQ(ImpossibleTime(1.0, 500'000'000, CacheMode::kCold, DeviceDetails{}), "");
}

Measurement TwoArms(double base_us, double cand_us, int blocks, int reps) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(1.0, 0.002);
  Measurement m;
  m.samples.assign(2, std::vector<std::vector<double>>(1));
  m.block_medians.assign(2, std::vector<std::vector<double>>(1));
  for (int b = 0; b < blocks; ++b) {
    for (int arm = 0; arm < 2; ++arm) {
      std::vector<double> block;
      for (int r = 0; r < reps; ++r) block.push_back((arm == 0 ? base_us : cand_us) * noise(rng));
      m.samples[arm][0].insert(m.samples[arm][0].end(), block.begin(), block.end());
      std::sort(block.begin(), block.end());
      m.block_medians[arm][0].push_back(block[block.size() / 2]);
    }
  }
  m.kept_reps = blocks * reps;
  return m;
}

v1::KernelParams BaseAndCandidate() {
  v1::KernelParams p;
  p.add_arms()->set_name("base");
  v1::KernelArm* c = p.add_arms();
  c->set_name("candidate");
  c->set_baseline("base");
  p.set_threshold(0.01);
  p.set_seed(3);
  return p;
}

double DerivedValue(const v1::Result& r, const std::string& name) {
  for (const v1::DerivedValue& d : r.derived()) {
    if (d.name() == name) return d.value();
  }
  return -1;
}

TEST(KernelResultsTest, ACandidateIsJudgedAgainstItsBaseline) {
  for (const int blocks : {1, 4}) {
    SCOPED_TRACE(blocks);
    std::vector<v1::Result> results(2);
    AddBaselineVerdicts(BaseAndCandidate(), TwoArms(100, 105, blocks, 40), results);
    EXPECT_TRUE(results[0].derived().empty());  // the baseline has none
    EXPECT_EQ(results[0].verdict(), v1::VERDICT_UNSPECIFIED);
    const double ratio = DerivedValue(results[1], "vs_baseline");
    EXPECT_NEAR(ratio, 1.05, 0.005);
    EXPECT_LT(DerivedValue(results[1], "vs_baseline_low"), ratio);
    EXPECT_GT(DerivedValue(results[1], "vs_baseline_high"), ratio);
    EXPECT_GT(DerivedValue(results[1], "vs_baseline_low"), 1.04);
    EXPECT_EQ(results[1].verdict(), v1::VERDICT_SLOWER);
    std::vector<v1::Result> same(2);
    AddBaselineVerdicts(BaseAndCandidate(), TwoArms(100, 100, blocks, 40), same);
    EXPECT_EQ(same[1].verdict(), v1::VERDICT_SAME);
  }
}

TEST(KernelResultsTest, EveryResultCarriesTheSameDerivedValues) {
  google::protobuf::RepeatedPtrField<v1::ProbeQuantity> declared;
  for (const std::string name : {"tbps", "tflops", "vs_baseline"}) declared.Add()->set_name(name);
  std::vector<v1::Result> results(2);
  *results[0].add_derived() = Derived("tbps", "TB/s", 3.0);
  *results[1].add_derived() = Derived("vs_baseline", "", 1.02);
  UniformDerived(declared, results);
  for (const v1::Result& r : results) {
    ASSERT_EQ(r.derived_size(), 2);
    EXPECT_EQ(r.derived(0).name(), "tbps");
    EXPECT_EQ(r.derived(1).name(), "vs_baseline");
  }
  EXPECT_EQ(results[0].derived(0).value(), 3.0);
  EXPECT_TRUE(std::isnan(results[0].derived(1).value()));
  EXPECT_TRUE(std::isnan(results[1].derived(0).value()));
  EXPECT_EQ(results[1].derived(1).value(), 1.02);
}

TEST(KernelResultsTest, AnArmsCodeIsItsLaunchesHashes) {
  const std::string a = Sha256Hex("a"), b = Sha256Hex("b");
  EXPECT_EQ(ArmCodeSha256({a}), a);
  EXPECT_EQ(ArmCodeSha256({a, b}), Sha256Hex(a + "," + b));
  EXPECT_NE(ArmCodeSha256({a, b}), ArmCodeSha256({b, a}));
}

}  // namespace
}  // namespace gpuprobe
