#include "server/probes/moe_union/exactness.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/expert_checksum.h"
#include "server/device/cpu_backend.h"
#include "server/probes/moe_union/moe_union_mapping.h"

namespace gpuprobe {
namespace {

// kEverySlot: a floor-distinct that reads every slot's expert, as the floor does.
enum class Fault { kNone, kPerturbOneElement, kSkipOneElement, kWrongChecksum, kEverySlot };

// The cpu's device code, plus the floor variants (the host checksum of the bytes they must read),
// with an optional fault injected into every output: the check must notice each fault. Its own
// device too (named "faulty", so that the floor is not refused as the cpu refuses it).
class FaultyBackend final : public Backend, public MoeArms {
 public:
  explicit FaultyBackend(Fault fault) : fault_(fault) {}
  std::string Name() const override { return "faulty"; }
  std::string Description() const override { return "faulty cpu"; }
  int64_t MemoryCapacityBytes() const override { return int64_t{1} << 40; }
  absl::Status LoadBanks(const MoeGeometry& g, uint64_t seed) override {
    banks_ = *SynthesizeBanks(g, seed);
    return cpu_->LoadBanks(g, seed);
  }
  absl::Status PlaceBanks() override { return cpu_->PlaceBanks(); }
  absl::StatusOr<ArmHandle> PrepareArm(const ArmInputs& inputs) override {
    inputs_.push_back(inputs);
    ArmInputs per_slot = inputs;
    per_slot.variant = KernelVariant::kPerSlot;
    return cpu_->PrepareArm(per_slot);
  }
  absl::StatusOr<DeviceLaunch*> Launch(ArmHandle arm, MoeKernel kernel) override {
    return cpu_->Launch(arm, kernel);
  }
  absl::StatusOr<LaunchOutput> RunOnce(ArmHandle arm, MoeKernel kernel) override {
    const ArmInputs& in = inputs_[arm];
    if (in.variant == KernelVariant::kFloor || in.variant == KernelVariant::kFloorDistinct) {
      const Nvfp4Bank& bank = kernel == MoeKernel::kGateUpSilu ? banks_.gate_up : banks_.down;
      std::vector<int32_t> experts = in.sel;
      if (in.variant == KernelVariant::kFloorDistinct && fault_ != Fault::kEverySlot) {
        std::sort(experts.begin(), experts.end());  // the sum does not depend on the order
        experts.erase(std::unique(experts.begin(), experts.end()), experts.end());
      }
      uint32_t sum = ExpertBytesChecksum(bank, experts);
      if (fault_ == Fault::kWrongChecksum) sum ^= 1;
      return LaunchOutput{.checksum = sum};
    }
    absl::StatusOr<LaunchOutput> out = cpu_->RunOnce(arm, kernel);
    if (!out.ok()) return out;
    if (fault_ == Fault::kPerturbOneElement) {  // 1% off the largest element
      auto largest = std::max_element(out->values.begin(), out->values.end(),
                                      [](float a, float b) { return std::abs(a) < std::abs(b); });
      *largest *= 1.01f;
    }
    if (fault_ == Fault::kSkipOneElement) {
      out->values[5] = std::numeric_limits<float>::quiet_NaN();
    }
    return out;
  }
  void ReleaseArms() override {
    inputs_.clear();
    cpu_->ReleaseArms();
  }
  DeviceDetails Details() const override { return {}; }

 private:
  Fault fault_;
  const std::unique_ptr<MoeArms> cpu_ = CpuMoeArms();
  MoeBanks banks_;
  std::vector<ArmInputs> inputs_;
};

class Collect final : public CheckObserver {
 public:
  void OnCheck(const KernelCheckResult& r) override { seen.push_back(r); }
  std::vector<KernelCheckResult> seen;
};

SweepSpec Spec(std::vector<KernelVariant> variants) {
  v1::SweepRequest r;
  r.mutable_geometry()->set_experts(32);
  r.mutable_geometry()->set_hidden(256);
  r.mutable_geometry()->set_ff(64);
  r.mutable_geometry()->set_selected(4);
  r.add_t_values(3);
  r.set_reps(2);
  r.set_seed(77);
  for (KernelVariant v : variants) r.add_variants(VariantToProto(v));
  return *ResolveSweep(r, SweepLimits{});
}

std::vector<KernelCheckResult> RunCheck(Fault fault, std::vector<KernelVariant> variants) {
  FaultyBackend backend(fault);
  Collect observer;
  std::atomic<bool> cancelled{false};
  absl::StatusOr<std::vector<KernelCheckResult>> results =
      RunExactnessCheck(Spec(std::move(variants)), "", backend, backend, observer, cancelled);
  EXPECT_TRUE(results.ok()) << results.status();
  EXPECT_EQ(observer.seen.size(), results.ok() ? results->size() : 0);
  return results.ok() ? *results : std::vector<KernelCheckResult>{};
}

TEST(ExactnessTest, CorrectKernelsPassEveryArmAndKernel) {
  const std::vector<KernelCheckResult> results =
      RunCheck(Fault::kNone, {KernelVariant::kPerSlot, KernelVariant::kFloor});
  ASSERT_EQ(results.size(), 2u * 3 * 2);  // 2 variants x 3 unions x 2 kernels
  for (const KernelCheckResult& r : results) {
    EXPECT_TRUE(r.passed) << r.kernel << " u" << r.arm.union_size << " " << r.detail;
    EXPECT_EQ(r.error.unwritten, 0);
    EXPECT_LT(r.error.max_rel, 1e-6);
  }
}

TEST(ExactnessTest, APerturbedElementFails) {
  for (const KernelCheckResult& r :
       RunCheck(Fault::kPerturbOneElement, {KernelVariant::kPerSlot})) {
    EXPECT_FALSE(r.passed) << r.kernel;
    EXPECT_GT(r.error.max_rel, kExactnessTolerance);
  }
}

TEST(ExactnessTest, AnUnwrittenElementFails) {
  for (const KernelCheckResult& r : RunCheck(Fault::kSkipOneElement, {KernelVariant::kPerSlot})) {
    EXPECT_FALSE(r.passed) << r.kernel;
    EXPECT_EQ(r.error.unwritten, 1);
  }
}

TEST(ExactnessTest, AFloorThatReadOtherBytesFails) {
  for (const KernelCheckResult& r : RunCheck(Fault::kWrongChecksum, {KernelVariant::kFloor})) {
    EXPECT_FALSE(r.passed) << r.kernel;
    EXPECT_THAT(r.detail, testing::HasSubstr("expected"));
  }
}

TEST(ExactnessTest, AFloorDistinctPassesWhenItReadsEachDistinctExpertOnce) {
  const std::vector<KernelCheckResult> results =
      RunCheck(Fault::kNone, {KernelVariant::kFloorDistinct});
  ASSERT_EQ(results.size(), 3u * 2);  // 3 unions x 2 kernels
  for (const KernelCheckResult& r : results) {
    EXPECT_EQ(r.arm.variant, KernelVariant::kFloorDistinct);
    EXPECT_TRUE(r.passed) << r.kernel << " u" << r.arm.union_size << " " << r.detail;
  }
}

TEST(ExactnessTest, AFloorDistinctThatReadEverySlotFailsWhereExpertsRepeat) {
  // Unions 4 and 8 of 12 slots repeat experts; at union 12 every slot's expert is distinct,
  // so reading every slot is reading each distinct expert once.
  for (const KernelCheckResult& r : RunCheck(Fault::kEverySlot, {KernelVariant::kFloorDistinct})) {
    EXPECT_EQ(r.passed, r.arm.union_size == r.arm.slots)
        << r.kernel << " u" << r.arm.union_size << " " << r.detail;
  }
}

TEST(CompareWithReferenceTest, SmallElementsAreJudgedAgainstTheFloor) {
  // 1e-9 off an element of 1e-6 is 1e-3 relative to itself but 1e-9 / (1e-3 * 10) against
  // the floor set by the largest element (10).
  const std::vector<float> out = {10.0f, 1e-6f + 1e-9f};
  const std::vector<double> ref = {10.0, 1e-6};
  const ErrorStats s = CompareWithReference(out, ref);
  EXPECT_LT(s.max_rel, 1e-6);
  EXPECT_EQ(s.unwritten, 0);
}

}  // namespace
}  // namespace gpuprobe
