#include "server/probes/moe_union/sweep_runner.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/measure/fake_clock_device.h"
#include "tests/probes/moe_union/small_sweep.h"
#include "tests/probes/recorded_events.h"

namespace gpuprobe {
namespace {

// A launch as the device timed it.
struct Timed {
  ArmHandle arm;
  MoeKernel kernel;
};

// One kernel of one arm, as the fakes hand them out; the fake devices know it.
struct FakeLaunch final : DeviceLaunch {
  ArmHandle arm = 0;
  MoeKernel kernel = MoeKernel::kGateUpSilu;
  absl::Status Enqueue(DeviceStream) override { return absl::OkStatus(); }
};

// A device and its moe-union code in one: gate+up and down launches of each prepared arm.
class FakeArms : public MoeArms {
 public:
  absl::StatusOr<ArmHandle> PrepareArm(const ArmInputs& inputs) override {
    prepared.push_back(inputs);
    const auto arm = static_cast<ArmHandle>(prepared.size() - 1);
    for (MoeKernel kernel : {MoeKernel::kGateUpSilu, MoeKernel::kDown}) {
      FakeLaunch& launch = kernel_launches_.emplace_back();
      launch.arm = arm;
      launch.kernel = kernel;
    }
    return arm;
  }
  absl::StatusOr<DeviceLaunch*> Launch(ArmHandle arm, MoeKernel kernel) override {
    return &kernel_launches_[2 * arm + (kernel == MoeKernel::kDown ? 1 : 0)];
  }
  absl::StatusOr<LaunchOutput> RunOnce(ArmHandle, MoeKernel) override {
    return absl::UnimplementedError("not needed by these tests");
  }
  absl::Status PlaceBanks() override {
    ++placements;
    prepared_before_block = static_cast<int>(prepared.size());
    return absl::OkStatus();
  }

  std::vector<ArmInputs> prepared;
  int placements = 0;
  int prepared_before_block = 0;  // arms prepared before the last PlaceBanks

 private:
  std::deque<FakeLaunch> kernel_launches_;  // two per arm; a deque keeps their addresses
};

// Records every call; an event-timed launch is 1000 us in each block's rep 0 (so a leak of rep 0
// into the statistics shows) and afterwards 10 * (arm + 1) us for gate+up, 5 * (arm + 1) for
// down, times (1 + block_step * block). Named "cpu", so the cpu's variants apply (per-slot
// only).
class RecordingBackend final : public FakeClockDevice, public FakeArms {
 public:
  std::string Name() const override { return "cpu"; }
  int64_t MemoryCapacityBytes() const override { return capacity_bytes; }
  absl::Status LoadBanks(const MoeGeometry& g, uint64_t seed) override {
    ++loads;
    geometry = g;
    bank_seed = seed;
    return absl::OkStatus();
  }
  void ReleaseArms() override { ++releases; }
  absl::Status PlaceBanks() override {
    launches_before_block = static_cast<int>(launches.size());
    return FakeArms::PlaceBanks();
  }
  absl::StatusOr<double> LaunchUs(DeviceLaunch& launch) override {
    const auto& fake = static_cast<const FakeLaunch&>(launch);
    launches.push_back({fake.arm, fake.kernel});
    if (fail_at_launch >= 0 && static_cast<int>(launches.size()) > fail_at_launch) {
      return absl::InternalError("launch failed");
    }
    const int arms_per_block = static_cast<int>(prepared.size()) - prepared_before_block;
    const int arm = fake.arm - prepared_before_block;
    if (static_cast<int>(launches.size()) - launches_before_block <= 2 * arms_per_block) {
      return 1000.0;
    }
    return (fake.kernel == MoeKernel::kGateUpSilu ? 10.0 : 5.0) * (arm + 1) *
           (1.0 + block_step * (placements - 1));
  }
  DeviceDetails Details() const override { return {.calibrated_read_tbps = 2.0}; }
  std::optional<TelemetrySample> SampleTelemetry() override {
    if (readings.empty()) return std::nullopt;
    TelemetrySample s = readings.front();
    if (readings.size() > 1) readings.erase(readings.begin());
    return s;
  }

  int64_t capacity_bytes = int64_t{1} << 40;
  int fail_at_launch = -1;
  int loads = 0, releases = 0;
  int launches_before_block = 0;
  double block_step = 0.0;  // each block's launches take this share longer than the last's
  MoeGeometry geometry;
  uint64_t bank_seed = 0;
  std::vector<Timed> launches;
  // Telemetry after each rep, in turn; the last repeats. Empty: none.
  std::vector<TelemetrySample> readings;
};

// A derived value of an arm's result; NaN when it has none.
double DerivedOf(const v1::Result& r, const std::string& name) {
  for (const v1::DerivedValue& d : r.derived()) {
    if (d.name() == name) return d.value();
  }
  return std::nan("");
}

int TelemetryReadings(const RecordedEvents& recorded) {
  return static_cast<int>(std::count_if(recorded.events.begin(), recorded.events.end(),
                                        [](const v1::JobEvent& e) { return e.has_telemetry(); }));
}

SweepSpec SmallSpec(int reps = 4) {
  v1::SweepRequest r = SmallSweepRequest();
  r.set_reps(reps);
  r.set_seed(9);
  return *ResolveSweep(r, SweepLimits{});
}

TEST(RunSweepTest, EveryRepRunsEveryArmOnceGateUpThenDown) {
  RecordingBackend backend;
  RecordedEvents recorded;
  std::atomic<bool> cancelled{false};
  const SweepSpec spec = SmallSpec();
  ASSERT_TRUE(RunSweep(spec, backend, backend, recorded.Publisher(), cancelled).status.ok());
  const int arms = 6;
  ASSERT_EQ(backend.launches.size(), static_cast<size_t>(spec.reps * arms * 2));
  for (int rep = 0; rep < spec.reps; ++rep) {
    for (int arm = 0; arm < arms; ++arm) {
      const Timed& gu = backend.launches[(rep * arms + arm) * 2];
      const Timed& dn = backend.launches[(rep * arms + arm) * 2 + 1];
      EXPECT_EQ(gu.arm, arm);
      EXPECT_EQ(gu.kernel, MoeKernel::kGateUpSilu);
      EXPECT_EQ(dn.arm, arm);
      EXPECT_EQ(dn.kernel, MoeKernel::kDown);
    }
  }
  const std::vector<v1::JobProgress> progress = recorded.Progress();
  EXPECT_EQ(progress.size(), static_cast<size_t>(spec.reps));
  EXPECT_EQ(progress.back().reps_done(), static_cast<uint32_t>(spec.reps));
  EXPECT_EQ(progress.back().reps_total(), static_cast<uint32_t>(spec.reps));
  EXPECT_EQ(backend.bank_seed, 9u);
}

TEST(RunSweepTest, TelemetryIsReadAfterEveryRepAndADisturbedSweepFlagsItsRows) {
  RecordingBackend backend;
  const TelemetrySample clean{.sm_mhz = 1980, .memory_mhz = 3201};
  TelemetrySample busy = clean;
  busy.foreign_processes.push_back({.pid = 4242, .name = "python3"});
  busy.clock_event_reasons = 0x4;  // software power cap
  backend.readings = {clean, busy, clean};
  RecordedEvents recorded;
  std::atomic<bool> cancelled{false};
  const SweepSpec spec = SmallSpec(4);
  ASSERT_TRUE(RunSweep(spec, backend, backend, recorded.Publisher(), cancelled).status.ok());
  EXPECT_EQ(TelemetryReadings(recorded), spec.reps);
  ASSERT_EQ(recorded.Results().size(), 6u);
  for (const v1::Result& r : recorded.Results()) {
    EXPECT_THAT(r.disturbance(), testing::HasSubstr("rep 1"));
    EXPECT_THAT(r.disturbance(), testing::HasSubstr("foreign process 4242 python3"));
    EXPECT_THAT(r.disturbance(), testing::HasSubstr("sw_power_cap"));
  }
}

TEST(RunSweepTest, RequireCleanFailsAtTheFirstDisturbedReadingNamingIt) {
  RecordingBackend backend;
  TelemetrySample busy{.sm_mhz = 1980};
  busy.foreign_processes.push_back({.pid = 7, .name = "trainer"});
  backend.readings = {busy};
  RecordedEvents recorded;
  std::atomic<bool> cancelled{false};
  v1::SweepRequest r = SmallSweepRequest();
  r.set_require_clean(true);
  const JobOutcome outcome =
      RunSweep(*ResolveSweep(r, SweepLimits{}), backend, backend, recorded.Publisher(), cancelled);
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(outcome.status.message(), testing::HasSubstr("require_clean"));
  EXPECT_THAT(outcome.status.message(), testing::HasSubstr("trainer"));
  EXPECT_TRUE(recorded.Results().empty());
}

TEST(RunSweepTest, WithoutTelemetryRowsAreNotFlagged) {
  RecordingBackend backend;
  RecordedEvents recorded;
  std::atomic<bool> cancelled{false};
  ASSERT_TRUE(
      RunSweep(SmallSpec(3), backend, backend, recorded.Publisher(), cancelled).status.ok());
  EXPECT_EQ(TelemetryReadings(recorded), 0);
  ASSERT_EQ(recorded.Results().size(), 6u);
  for (const v1::Result& r : recorded.Results()) EXPECT_TRUE(r.disturbance().empty());
}

TEST(RunSweepTest, RepZeroIsDroppedFromTheStatistics) {
  RecordingBackend backend;
  RecordedEvents recorded;
  std::atomic<bool> cancelled{false};
  const JobOutcome outcome =
      RunSweep(SmallSpec(4), backend, backend, recorded.Publisher(), cancelled);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(outcome.results, 6);
  const std::vector<v1::Result> results = recorded.Results();
  ASSERT_EQ(results.size(), 6u);
  for (const v1::Result& r : results) {
    const double arm = r.arm_index() + 1;
    EXPECT_EQ(r.metrics(0).name(), "gu_us");
    EXPECT_EQ(r.metrics(0).kept(), 3u);
    EXPECT_EQ(r.metrics(0).max(), 10.0 * arm) << "rep 0's 1000 us leaked in";
    EXPECT_EQ(r.metrics(1).name(), "down_us");
    EXPECT_EQ(r.metrics(1).median(), 5.0 * arm);
    EXPECT_EQ(DerivedOf(r, "section_us"), 15.0 * arm);
  }
  // The reference is the last arm (t=3, union=12): its section is 90 us.
  EXPECT_EQ(results[0].axes(0).text_value(), "per-slot");
  EXPECT_EQ(results[5].axes(3).int_value(), 12);
  EXPECT_DOUBLE_EQ(DerivedOf(results[0], "vs_reference"), 90.0 / 15.0);
  EXPECT_DOUBLE_EQ(DerivedOf(results[5], "vs_reference"), 1.0);
}

TEST(RunSweepTest, EachBlockRunsOnBanksPlacedAnewAndKeepsItsSection) {
  RecordingBackend backend;
  backend.block_step = 0.1;  // blocks 0, 1, 2 run at 1.0x, 1.1x and 1.2x
  RecordedEvents recorded;
  std::atomic<bool> cancelled{false};
  SweepSpec spec = SmallSpec(4);
  spec.blocks = 3;
  const JobOutcome outcome = RunSweep(spec, backend, backend, recorded.Publisher(), cancelled);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(backend.placements, 3);
  EXPECT_EQ(backend.prepared.size(), 3 * ExpandArms(spec).size());  // every arm, every block
  const std::vector<v1::Result> results = recorded.Results();
  ASSERT_EQ(results.size(), 6u);
  for (const v1::Result& r : results) {
    const double section = 15.0 * (r.arm_index() + 1);
    EXPECT_EQ(r.metrics(0).kept(), 9u);  // 3 kept reps a block: each block's rep 0 is dropped
    EXPECT_DOUBLE_EQ(r.metrics(0).max(), 1.2 * 10.0 * (r.arm_index() + 1)) << "a rep 0 leaked in";
    ASSERT_EQ(r.block_section_us_size(), 3);
    EXPECT_DOUBLE_EQ(r.block_section_us(0), section);
    EXPECT_DOUBLE_EQ(r.block_section_us(1), 1.1 * section);
    EXPECT_DOUBLE_EQ(r.block_section_us(2), 1.2 * section);
    // The median over every block's reps.
    EXPECT_DOUBLE_EQ(DerivedOf(r, "section_us"), 1.1 * section);
  }
  // Progress counts the job's reps over all blocks.
  const std::vector<v1::JobProgress> progress = recorded.Progress();
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.front().reps_done(), 1u);
  EXPECT_EQ(progress.front().reps_total(), 12u);
  EXPECT_EQ(progress.back().reps_done(), 12u);
}

TEST(RunSweepTest, ArmInputsCarryExactUnionRoutingAndActivations) {
  RecordingBackend backend;
  RecordedEvents recorded;
  std::atomic<bool> cancelled{false};
  ASSERT_TRUE(RunSweep(SmallSpec(), backend, backend, recorded.Publisher(), cancelled).status.ok());
  const std::vector<Arm> arms = ExpandArms(SmallSpec());
  ASSERT_EQ(backend.prepared.size(), arms.size());
  for (size_t i = 0; i < arms.size(); ++i) {
    const ArmInputs& in = backend.prepared[i];
    EXPECT_EQ(static_cast<int>(in.sel.size()), arms[i].slots);
    EXPECT_EQ(static_cast<int>(std::set<int32_t>(in.sel.begin(), in.sel.end()).size()),
              arms[i].union_size);
    EXPECT_EQ(static_cast<int>(in.x.size()), arms[i].t * 512);
    EXPECT_EQ(static_cast<int>(in.h.size()), arms[i].slots * 128);
  }
}

TEST(RunSweepTest, CancelStopsBetweenLaunches) {
  RecordingBackend backend;
  RecordedEvents recorded;
  std::atomic<bool> cancelled{true};
  const JobOutcome outcome =
      RunSweep(SmallSpec(), backend, backend, recorded.Publisher(), cancelled);
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(backend.launches.empty());
  EXPECT_TRUE(recorded.Results().empty());
}

TEST(RunSweepTest, CancelKeepsRowsOfTheCompletedRepsOnly) {
  // Cancels in the middle of rep 3: reps 1 and 2 are kept, rep 3's partial samples are not.
  class CancelMidRep final : public FakeClockDevice, public FakeArms {
   public:
    explicit CancelMidRep(std::atomic<bool>& cancelled) : cancelled_(cancelled) {}
    std::string Name() const override { return "cpu"; }
    absl::Status LoadBanks(const MoeGeometry&, uint64_t) override { return absl::OkStatus(); }
    void ReleaseArms() override {}
    absl::StatusOr<double> LaunchUs(DeviceLaunch&) override {
      // 6 arms x 2 kernels per rep: launch 40 is inside rep 3.
      if (++launches_ == 40) cancelled_ = true;
      return launches_ > 36 ? 1e6 : 10.0;  // rep 3 samples would show as huge
    }

   private:
    std::atomic<bool>& cancelled_;
    int launches_ = 0;
  };
  std::atomic<bool> cancelled{false};
  CancelMidRep backend(cancelled);
  RecordedEvents recorded;
  const JobOutcome outcome =
      RunSweep(SmallSpec(10), backend, backend, recorded.Publisher(), cancelled);
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(std::string(outcome.status.message()), testing::HasSubstr("2 completed reps"));
  ASSERT_EQ(recorded.Results().size(), 6u);
  for (const v1::Result& r : recorded.Results()) {
    EXPECT_EQ(r.metrics(0).kept(), 2u);
    EXPECT_EQ(r.metrics(0).max(), 10.0);
  }
}

TEST(RunSweepTest, LaunchFailureFailsTheSweepWithItsStatus) {
  RecordingBackend backend;
  backend.fail_at_launch = 5;
  RecordedEvents recorded;
  std::atomic<bool> cancelled{false};
  const JobOutcome outcome =
      RunSweep(SmallSpec(), backend, backend, recorded.Publisher(), cancelled);
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(recorded.Results().empty());
}

TEST(CheckFitsBackendTest, RefusesMissingVariantsAndOversizedSweepsBeforeAllocating) {
  RecordingBackend backend;
  SweepSpec spec = SmallSpec();
  spec.variants = {KernelVariant::kFloor};
  EXPECT_EQ(CheckFitsBackend(spec, backend).code(), absl::StatusCode::kUnimplemented);

  backend.capacity_bytes = 1 << 20;
  const absl::Status s = CheckFitsBackend(SmallSpec(), backend);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()), testing::HasSubstr("GiB"));
  EXPECT_THAT(std::string(s.message()), testing::StartsWith("experts, hidden, ff: "));
  RecordedEvents recorded;
  std::atomic<bool> cancelled{false};
  EXPECT_FALSE(
      RunSweep(SmallSpec(), backend, backend, recorded.Publisher(), cancelled).status.ok());
  EXPECT_EQ(backend.loads, 0);
}

TEST(RunSweepTest, TheSpecsTimingAndCacheReachTheTimer) {
  // Graph, cold: each launch of each arm is captured once, as kGraphLaunchesPerSample launches
  // each after its flush, and replayed at every rep.
  RecordingBackend backend;
  RecordedEvents recorded;
  std::atomic<bool> cancelled{false};
  SweepSpec spec = SmallSpec();
  spec.timing = TimingMode::kGraph;
  spec.cache = CacheMode::kCold;
  ASSERT_TRUE(RunSweep(spec, backend, backend, recorded.Publisher(), cancelled).status.ok());
  const int launches = 2 * static_cast<int>(ExpandArms(spec).size());
  EXPECT_EQ(backend.captures, launches);
  EXPECT_THAT(backend.marks_made, testing::Each(testing::Eq(2 * kGraphLaunchesPerSample)));
  EXPECT_EQ(backend.launches.size(),
            static_cast<size_t>(spec.reps * launches * kGraphLaunchesPerSample));
  EXPECT_EQ(std::count(backend.log.begin(), backend.log.end(), "flush"),
            std::ssize(backend.launches));
}

}  // namespace
}  // namespace gpuprobe
