// The kernel probe without a GPU: its declaration, its plan (the cpu refused, memory and the
// worker's silence bound), and its runs on a fake clock with a fake runner: arms timed
// interleaved on every placement, rotated buffers passed in turn, each candidate judged against
// its baseline, a time faster than its declared read flagged, the code each arm ran named, and
// the check (outputs poisoned, compared with the reference arm's; a timed job with verify stops
// untimed when it fails).
#include "server/probes/kernel/kernel_probe.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/device/cpu_backend.h"
#include "tests/measure/fake_clock_device.h"
#include "tests/probes/recorded_events.h"
#include "tests/probes/resolved_spec.h"

namespace gpuprobe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kModule = Sha256Hex("module");

// x (f32, uniform) read by each arm into y; arms "base" and, where asked, "candidate" against it.
v1::KernelParams Params(bool candidate) {
  v1::KernelParams p;
  v1::KernelBuffer* x = p.add_buffers();
  x->set_name("x");
  x->set_dtype("f32");
  x->set_count(1024);
  x->mutable_uniform()->set_a(-1);
  x->mutable_uniform()->set_b(1);
  x->set_rotation(2);
  v1::KernelBuffer* y = p.add_buffers();
  y->set_name("y");
  y->set_dtype("f32");
  y->set_count(1024);
  for (const std::string name : {"base", "candidate"}) {
    if (name == "candidate" && !candidate) break;
    v1::KernelArm* arm = p.add_arms();
    arm->set_name(name);
    arm->set_bytes_read(4096);
    arm->add_outputs("y");
    if (name == "candidate") arm->set_baseline("base");
    v1::KernelLaunch* l = arm->add_launches();
    l->set_module(kModule);
    l->set_kernel("copy");
    l->add_grid(4);
    l->add_block(256);
    l->add_args()->set_buffer("y");
    l->add_args()->set_buffer("x");
  }
  p.set_reps(12);
  p.set_timing(v1::TIMING_MODE_EVENTS);
  return p;
}

v1::ProbeRequest Request(const v1::KernelParams& p) {
  v1::ProbeRequest r;
  r.set_probe("kernel");
  r.mutable_params()->PackFrom(p);
  return r;
}

// What a fake runner saw, kept past the run (the probe ends its runner with the job).
struct Seen {
  std::map<std::string, std::string> loaded;
  std::vector<int> copies_passed;
  int placements = 0;
};

// Host memory for the buffers; an arm's launch copies x into y, wrongly where its name says so.
class FakeRunner final : public KernelRunner {
 public:
  struct Launch final : DeviceLaunch {
    Launch(FakeRunner& s, std::string arm) : runner(s), arm(std::move(arm)) {}
    absl::Status Enqueue(DeviceStream) override {
      runner.seen.copies_passed.push_back(runner.next_copy++ % 2);
      return absl::OkStatus();
    }
    FakeRunner& runner;
    const std::string arm;
  };

  FakeRunner(std::map<std::string, double> arm_us, Seen& seen)
      : arm_us(std::move(arm_us)), seen(seen) {}

  absl::Status Load(const v1::KernelParams& params,
                    const std::map<std::string, std::string>& modules) override {
    params_ = params;
    seen.loaded = modules;
    for (const v1::KernelArm& arm : params.arms()) {
      launches_.push_back(std::make_unique<Launch>(*this, arm.name()));
    }
    return absl::OkStatus();
  }
  std::string CodeSha256(int arm, int) const override {
    return Sha256Hex(params_.arms(arm).name() == "wrong" ? "other code" : "code");
  }
  absl::Status Place() override {
    ++seen.placements;
    for (const v1::KernelBuffer& b : params_.buffers()) {
      memory[b.name()] = std::string(b.size_bytes(), b.name() == "x" ? '\x11' : '\0');
    }
    return absl::OkStatus();
  }
  DeviceLaunch& Arm(int arm) override { return *launches_[arm]; }
  absl::Status Poison(const std::string& buffer) override {
    memory[buffer].assign(memory[buffer].size(), '\xff');
    return absl::OkStatus();
  }
  absl::Status RunOnce(int arm) override {
    memory["y"] = memory["x"];
    if (params_.arms(arm).name() == "wrong") memory["y"][100] = '\x12';
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> Read(const std::string& buffer) override { return memory[buffer]; }

  std::map<std::string, double> arm_us;
  Seen& seen;
  std::map<std::string, std::string> memory;
  uint64_t next_copy = 0;

 private:
  v1::KernelParams params_;
  std::vector<std::unique_ptr<Launch>> launches_;
};

// A fake clock on which each arm's launch takes its runner's time for it; 4 TB/s, a 1 MB L2.
class Device final : public FakeClockDevice {
 public:
  std::string Name() const override { return "cuda"; }
  DeviceDetails Details() const override {
    return {.l2_bytes = 1 << 20, .calibrated_read_tbps = 4.0};
  }

 protected:
  absl::StatusOr<double> LaunchUs(DeviceLaunch& launch) override {
    auto* arm = dynamic_cast<FakeRunner::Launch*>(&launch);
    if (arm == nullptr) return 0.0;  // the timer's own work
    if (absl::Status s = arm->Enqueue(nullptr); !s.ok()) return s;
    return arm->runner.arm_us.at(arm->arm);
  }
};

TEST(KernelProbeTest, ItDeclaresClientCodeAndRefusesTheCpu) {
  const KernelProbe probe;
  EXPECT_EQ(probe.Name(), "kernel");
  EXPECT_TRUE(probe.Info().client_code());
  EXPECT_TRUE(probe.Info().has_check());
  absl::StatusOr<ProbeSpec> spec = probe.Resolve(Request(Params(true)));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(probe.Modules(**spec), ElementsAre(kModule));
  CpuBackend cpu;
  absl::StatusOr<ProbePlan> plan = probe.Plan(**spec, false, cpu);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(plan.status().message(), HasSubstr("the kernel probe needs a cuda device"));
}

TEST(KernelProbeTest, ThePlanBoundsMemoryAndTheWorkersSilence) {
  const KernelProbe probe;
  Device device;
  v1::KernelParams p = Params(true);
  p.set_max_launch_seconds(0.5);
  absl::StatusOr<ProbePlan> plan = probe.Plan(**probe.Resolve(Request(p)), false, device);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // 2 arms x 1 launch, one per sample in events mode, at most 0.5 s each, after the setup.
  EXPECT_NEAR(plan->silence_seconds, 10 + 1.0, 0.01);
  // The bound admission holds: 12 reps of 1 s of launches, and the placement.
  EXPECT_NEAR(plan->device_seconds, 12 * 1.0, 0.01);
  // Graph: 10 runs of each arm per sample, after 3 such samples that size the samples.
  p.set_timing(v1::TIMING_MODE_GRAPH);
  EXPECT_NEAR(probe.Plan(**probe.Resolve(Request(p)), false, device)->device_seconds,
              12 * 10 + 3 * 10, 0.01);
  p.set_graph_launches(30);  // 30 runs, as set
  EXPECT_NEAR(probe.Plan(**probe.Resolve(Request(p)), false, device)->device_seconds, 12 * 30,
              0.01);
  p.clear_graph_launches();
  p.set_timing(v1::TIMING_MODE_EVENTS);
  p.mutable_buffers(0)->set_count(uint64_t{1} << 38);  // 1 TiB of f32, twice
  EXPECT_THAT(probe.Resolve(Request(p)).status().message(), HasSubstr("buffers"));
  p.mutable_buffers(0)->set_count(uint64_t{1} << 32);  // 16 GiB, twice: 32 GiB
  absl::StatusOr<ProbePlan> big = probe.Plan(**probe.Resolve(Request(p)), false, device);
  ASSERT_TRUE(big.ok()) << big.status();  // the fake device offers 1 TiB
}

// Runs `p` on the fake device with a fake runner of these arm times; what it saw stays for
// inspection.
struct FakeRun {
  explicit FakeRun(std::map<std::string, double> arm_us) {
    probe = std::make_unique<KernelProbe>(
        [this, arm_us](Backend&) -> absl::StatusOr<std::unique_ptr<KernelRunner>> {
          return std::make_unique<FakeRunner>(arm_us, seen);
        });
  }
  JobOutcome Run(const v1::KernelParams& p, bool check = false) {
    absl::StatusOr<ProbeSpec> spec = probe->Resolve(Request(p));
    EXPECT_TRUE(spec.ok()) << spec.status();
    const std::atomic<bool> cancelled{false};
    return probe->Run(
        {.job_id = "job-1", .spec = *spec, .check = check, .modules = {{kModule, "module bytes"}}},
        device, recorded.Publisher(), cancelled);
  }
  std::unique_ptr<KernelProbe> probe;
  Seen seen;
  Device device;
  RecordedEvents recorded;
};

std::string TextAxisOf(const v1::Result& r, const std::string& name) {
  for (const v1::AxisValue& a : r.axes()) {
    if (a.name() == name) return a.text_value();
  }
  return "";
}

double DerivedOf(const v1::Result& r, const std::string& name) {
  for (const v1::DerivedValue& d : r.derived()) {
    if (d.name() == name) return d.value();
  }
  return -1;
}

TEST(KernelProbeTest, ArmsAreTimedOnEveryPlacementAndJudgedAgainstTheirBaseline) {
  FakeRun run({{"base", 100.0}, {"candidate", 105.0}});
  v1::KernelParams p = Params(true);
  p.set_blocks(3);
  const JobOutcome outcome = run.Run(p);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(run.seen.loaded.at(kModule), "module bytes");
  EXPECT_EQ(run.seen.placements, 3);
  // Every launch of any arm passes the other copy of x than the launch before it.
  ASSERT_GT(run.seen.copies_passed.size(), 4u);
  for (size_t i = 1; i < run.seen.copies_passed.size(); ++i) {
    EXPECT_NE(run.seen.copies_passed[i], run.seen.copies_passed[i - 1]) << i;
  }
  const std::vector<v1::Result> results = run.recorded.Results();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(TextAxisOf(results[0], "arm"), "base");
  EXPECT_EQ(TextAxisOf(results[0], "code_sha256"), Sha256Hex("code"));
  EXPECT_EQ(results[0].metrics(0).name(), "time_us");
  EXPECT_DOUBLE_EQ(results[0].metrics(0).median(), 100.0);
  EXPECT_EQ(results[0].verdict(), v1::VERDICT_UNSPECIFIED);
  EXPECT_DOUBLE_EQ(DerivedOf(results[1], "vs_baseline"), 1.05);
  EXPECT_EQ(results[1].verdict(), v1::VERDICT_SLOWER);
  EXPECT_EQ(results[0].impossible(), "");  // 4 KiB fits in the L2
}

// The launches between the last sample's marks 0 and 1 (a warm graph sample's).
int LaunchesInTheLastSample(const std::vector<std::string>& log) {
  const auto end = std::find(log.rbegin(), log.rend(), "mark1");
  const auto start = std::find(end, log.rend(), "mark0");
  return static_cast<int>(std::count(end, start, "launch"));
}

TEST(KernelProbeTest, AWarmGraphSampleTakesAboutHalfAMillisecondOfRuns) {
  v1::KernelParams p = Params(false);  // x rotated twice
  p.set_timing(v1::TIMING_MODE_GRAPH);
  {  // 5 us a run: 100 runs a sample
    FakeRun run({{"base", 5.0}});
    ASSERT_TRUE(run.Run(p).status.ok());
    EXPECT_EQ(LaunchesInTheLastSample(run.device.log), 100);
    EXPECT_EQ(run.recorded.Results().at(0).metrics(0).median(), 5.0);
  }
  {  // 0.3 us: at most 1000
    FakeRun run({{"base", 0.3}});
    ASSERT_TRUE(run.Run(p).status.ok());
    EXPECT_EQ(LaunchesInTheLastSample(run.device.log), 1000);
  }
  {  // 75 us: at least 10
    FakeRun run({{"base", 75.0}});
    ASSERT_TRUE(run.Run(p).status.ok());
    EXPECT_EQ(LaunchesInTheLastSample(run.device.log), 10);
  }
  {  // 41 us: 13 runs take 0.5 ms; 14 is on x's period
    FakeRun run({{"base", 41.0}});
    ASSERT_TRUE(run.Run(p).status.ok());
    EXPECT_EQ(LaunchesInTheLastSample(run.device.log), 14);
  }
  {  // set: as set
    FakeRun run({{"base", 5.0}});
    p.set_graph_launches(30);
    ASSERT_TRUE(run.Run(p).status.ok());
    EXPECT_EQ(LaunchesInTheLastSample(run.device.log), 30);
  }
  p.set_graph_launches(15);
  EXPECT_THAT(KernelProbe().Resolve(Request(p)).status().message(),
              HasSubstr("graph_launches: 15 is not a multiple of the rotations' period 2"));
}

// The sizing samples: three of 10 runs for a short arm, one for an arm 10 runs of which fill the
// sample already; counted against the same job with its count set.
TEST(KernelProbeTest, SizingASampleCostsThreeSamplesOfTenRunsOrOneForALongArm) {
  v1::KernelParams p = Params(false);
  p.set_timing(v1::TIMING_MODE_GRAPH);
  const auto launches = [&](double us, uint32_t graph_launches) {
    FakeRun run({{"base", us}});
    p.set_graph_launches(graph_launches);
    EXPECT_TRUE(run.Run(p).status.ok());
    return std::count(run.device.log.begin(), run.device.log.end(), "launch");
  };
  EXPECT_EQ(launches(5.0, 0) - launches(5.0, 100), 3 * 10);
  EXPECT_EQ(launches(150.0, 0) - launches(150.0, 10), 1 * 10);
}

TEST(KernelProbeTest, ATimeFasterThanTheDeclaredBytesIsFlagged) {
  FakeRun run({{"base", 100.0}});
  v1::KernelParams p = Params(false);
  p.mutable_arms(0)->set_bytes_read(1'000'000'000);  // 250 us at 4 TB/s
  ASSERT_TRUE(run.Run(p).status.ok());
  ASSERT_EQ(run.recorded.Results().size(), 1u);
  EXPECT_THAT(run.recorded.Results()[0].impossible(), HasSubstr("must come from device memory"));
}

TEST(KernelProbeTest, TheCheckComparesEachArmsOutputsWithTheReferences) {
  FakeRun run({{"base", 1.0}, {"candidate", 1.0}});
  const JobOutcome good = run.Run(Params(true), /*check=*/true);
  ASSERT_TRUE(good.status.ok()) << good.status;
  ASSERT_EQ(run.recorded.Checks().size(), 1u);  // the candidate's y against the base's
  EXPECT_TRUE(run.recorded.Checks()[0].passed());
  EXPECT_THAT(run.recorded.Checks()[0].detail(), HasSubstr("y against base's: all 4096 bytes"));

  FakeRun wrong({{"base", 1.0}, {"wrong", 1.0}});
  v1::KernelParams p = Params(true);
  p.mutable_arms(1)->set_name("wrong");
  p.mutable_arms(1)->set_baseline("base");
  const JobOutcome caught = wrong.Run(p, /*check=*/true);
  EXPECT_EQ(caught.status.code(), absl::StatusCode::kDataLoss);
  ASSERT_EQ(wrong.recorded.Checks().size(), 1u);
  EXPECT_FALSE(wrong.recorded.Checks()[0].passed());
  EXPECT_THAT(wrong.recorded.Checks()[0].detail(), HasSubstr("1 of 4096 bytes differ"));
  // Timed with verify: the failed check stops the job before any rep.
  FakeRun verified({{"base", 1.0}, {"wrong", 1.0}});
  p.set_verify(true);
  const JobOutcome untimed = verified.Run(p);
  EXPECT_EQ(untimed.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(untimed.status.message(), HasSubstr("the arms were not timed"));
  EXPECT_TRUE(verified.recorded.Results().empty());
  EXPECT_TRUE(verified.seen.copies_passed.empty());
}

}  // namespace
}  // namespace gpuprobe
