// The timers' policy, on a device whose clock only the work moves (a launch takes 5 us and a
// flush 1000 us, so a sample shows exactly what its timed region held); the cpu device's
// primitives; and a device that runs no work.
#include "server/measure/launch_timer.h"

#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/device/cpu_backend.h"
#include "tests/measure/fake_clock_device.h"

namespace gpuprobe {
namespace {

using testing::ElementsAre;

constexpr double kLaunchUs = 5.0;

// Every launch takes 5 us.
class ScriptedDevice final : public FakeClockDevice {
 protected:
  absl::StatusOr<double> LaunchUs(DeviceLaunch& launch) override {
    RETURN_IF_ERROR(launch.Enqueue(nullptr));
    return kLaunchUs;
  }
};

struct CountingLaunch final : DeviceLaunch {
  absl::Status Enqueue(DeviceStream) override {
    ++runs;
    return status;
  }
  int runs = 0;
  absl::Status status;
};

TEST(LaunchTimerTest, EventsTimeOneLaunchBetweenTwoMarks) {
  ScriptedDevice device;
  CountingLaunch launch;
  LaunchTimer timer(device);
  absl::StatusOr<double> us = timer.Time(launch, {.timing = TimingMode::kEvents});
  ASSERT_TRUE(us.ok()) << us.status();
  EXPECT_DOUBLE_EQ(*us, kLaunchUs);
  EXPECT_THAT(device.log, ElementsAre("mark0", "launch", "mark1", "sync"));
  EXPECT_TRUE(device.allocated.empty()) << "a warm timer takes no flush memory";
}

TEST(LaunchTimerTest, ColdEventsFlushOutsideTheTimedRegionWithANewValueEachTime) {
  ScriptedDevice device;
  CountingLaunch launch;
  LaunchTimer timer(device);
  for (int sample = 0; sample < 3; ++sample) {
    absl::StatusOr<double> us =
        timer.Time(launch, {.timing = TimingMode::kEvents, .cache = CacheMode::kCold});
    ASSERT_TRUE(us.ok()) << us.status();
    EXPECT_DOUBLE_EQ(*us, kLaunchUs);
  }
  EXPECT_EQ(absl::StrJoin(device.log, " "),
            "flush mark0 launch mark1 sync flush mark0 launch mark1 sync "
            "flush mark0 launch mark1 sync");
  EXPECT_THAT(device.flush_values, ElementsAre(1, 2, 3));
  EXPECT_THAT(device.allocated, ElementsAre(2 * 4096)) << "twice the last-level cache, once";
}

TEST(LaunchTimerTest, AGraphIsCapturedOnceAndItsSampleIsTheMeanOfItsLaunches) {
  ScriptedDevice device;
  CountingLaunch launch;
  LaunchTimer timer(device);
  const TimingOptions graph{.timing = TimingMode::kGraph, .graph_launches = 4};
  for (int sample = 0; sample < 2; ++sample) {
    absl::StatusOr<double> us = timer.Time(launch, graph);
    ASSERT_TRUE(us.ok()) << us.status();
    EXPECT_DOUBLE_EQ(*us, kLaunchUs);
  }
  EXPECT_EQ(device.captures, 1);
  EXPECT_EQ(launch.runs, 8);
  EXPECT_THAT(device.marks_made, ElementsAre(2));
  EXPECT_EQ(absl::StrJoin(device.log, " "),
            "mark0 launch launch launch launch mark1 sync mark0 launch launch launch launch mark1 "
            "sync");
}

TEST(LaunchTimerTest, AColdGraphBracketsEachLaunchAfterItsFlush) {
  ScriptedDevice device;
  CountingLaunch launch;
  LaunchTimer timer(device);
  absl::StatusOr<double> us = timer.Time(
      launch, {.timing = TimingMode::kGraph, .cache = CacheMode::kCold, .graph_launches = 3});
  ASSERT_TRUE(us.ok()) << us.status();
  EXPECT_DOUBLE_EQ(*us, kLaunchUs) << "no flush is timed";
  EXPECT_EQ(absl::StrJoin(device.log, " "),
            "flush mark0 launch mark1 flush mark2 launch mark3 flush mark4 launch mark5 sync");
  EXPECT_THAT(device.marks_made, ElementsAre(6));
}

TEST(LaunchTimerTest, EachWayOfTimingALaunchKeepsItsOwnMarksAndGraph) {
  ScriptedDevice device;
  CountingLaunch launch;
  LaunchTimer timer(device);
  for (int round = 0; round < 2; ++round) {
    for (TimingMode timing : {TimingMode::kEvents, TimingMode::kGraph}) {
      for (CacheMode cache : {CacheMode::kWarm, CacheMode::kCold}) {
        absl::StatusOr<double> us =
            timer.Time(launch, {.timing = timing, .cache = cache, .graph_launches = 2});
        ASSERT_TRUE(us.ok()) << us.status();
        EXPECT_DOUBLE_EQ(*us, kLaunchUs);
      }
    }
  }
  EXPECT_THAT(device.marks_made, ElementsAre(2, 2, 2, 4));
  EXPECT_EQ(device.captures, 2);
  EXPECT_THAT(device.allocated, ElementsAre(2 * 4096)) << "one flush per device";
}

TEST(LaunchTimerTest, ALaunchThatFailsFailsTheSampleAndIsCapturedAgainNextTime) {
  ScriptedDevice device;
  CountingLaunch launch;
  launch.status = absl::InternalError("kernel refused");
  LaunchTimer timer(device);
  const TimingOptions graph{.timing = TimingMode::kGraph, .graph_launches = 2};
  EXPECT_EQ(timer.Time(launch, graph).status().message(), "kernel refused");
  EXPECT_EQ(timer.Time(launch, {.timing = TimingMode::kEvents}).status().message(),
            "kernel refused");
  launch.status = absl::OkStatus();
  EXPECT_TRUE(timer.Time(launch, graph).ok());
}

TEST(LaunchTimerTest, AGraphOfNoLaunchesIsRefused) {
  ScriptedDevice device;
  CountingLaunch launch;
  LaunchTimer timer(device);
  EXPECT_EQ(timer.Time(launch, {.timing = TimingMode::kGraph, .graph_launches = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(launch.runs, 0);
}

// --inject-delay-ns: one wait per sample, inside its timed region, after the first launch;
// a graph's sample, the mean of its launches, grows by the wait over the launches.
TEST(LaunchTimerTest, AnInjectedWaitIsTimedOncePerSampleInEveryMode) {
  ScriptedDevice device;
  device.set_injected_wait_ns(2000);
  CountingLaunch launch;
  LaunchTimer timer(device);
  absl::StatusOr<double> us = timer.Time(launch, {.timing = TimingMode::kEvents});
  ASSERT_TRUE(us.ok()) << us.status();
  EXPECT_DOUBLE_EQ(*us, kLaunchUs + 2.0);
  us = timer.Time(launch, {.timing = TimingMode::kGraph, .graph_launches = 4});
  ASSERT_TRUE(us.ok()) << us.status();
  EXPECT_DOUBLE_EQ(*us, kLaunchUs + 2.0 / 4);
  us = timer.Time(launch,
                  {.timing = TimingMode::kGraph, .cache = CacheMode::kCold, .graph_launches = 2});
  ASSERT_TRUE(us.ok()) << us.status();
  EXPECT_DOUBLE_EQ(*us, kLaunchUs + 2.0 / 2) << "inside launch 0's marks, not its flush's";
  EXPECT_EQ(absl::StrJoin(device.log, " "),
            "mark0 launch wait mark1 sync "
            "mark0 launch wait launch launch launch mark1 sync "
            "flush mark0 launch wait mark1 flush mark2 launch mark3 sync");
}

TEST(LaunchTimerTest, AGraphCapturedBeforeTheInjectedWaitChangedIsCapturedAgain) {
  ScriptedDevice device;
  CountingLaunch launch;
  LaunchTimer timer(device);
  const TimingOptions graph{.timing = TimingMode::kGraph, .graph_launches = 4};
  absl::StatusOr<double> us = timer.Time(launch, graph);
  ASSERT_TRUE(us.ok()) << us.status();
  EXPECT_DOUBLE_EQ(*us, kLaunchUs);
  device.set_injected_wait_ns(4000);
  us = timer.Time(launch, graph);
  ASSERT_TRUE(us.ok()) << us.status();
  EXPECT_DOUBLE_EQ(*us, kLaunchUs + 1.0);
  EXPECT_EQ(device.captures, 2);
}

// On the cpu the wait spins on the timer's own clock, so a sample holds at least all of it.
TEST(LaunchTimerTest, TheCpuDevicesInjectedWaitIsInEverySampleAndItsDescription) {
  CpuBackend cpu(/*repeat=*/1);
  EXPECT_EQ(cpu.Description(), "cpu (reference kernels)");
  cpu.set_injected_wait_ns(300'000);
  EXPECT_EQ(cpu.Description(), "cpu (reference kernels, injected wait 300000 ns per sample)");
  CountingLaunch launch;
  LaunchTimer timer(cpu);
  absl::StatusOr<double> us = timer.Time(launch, {.timing = TimingMode::kEvents});
  ASSERT_TRUE(us.ok()) << us.status();
  EXPECT_GE(*us, 300.0);
  us = timer.Time(launch, {.timing = TimingMode::kGraph, .graph_launches = 3});
  ASSERT_TRUE(us.ok()) << us.status();
  EXPECT_GE(*us, 100.0);
  EXPECT_EQ(launch.runs, 1 + 3);
  EXPECT_EQ(CpuBackend(2).Description(), "cpu (reference kernels, each run 2x)");
}

// The cpu device: work runs on the calling thread, `repeat` times per enqueue, and a replay
// runs the captured work again.
TEST(LaunchTimerTest, TheCpuDeviceRunsEachLaunchRepeatTimesInEveryMode) {
  CpuBackend cpu(/*repeat=*/3);
  CountingLaunch launch;
  LaunchTimer timer(cpu);
  ASSERT_TRUE(timer.Time(launch, {.timing = TimingMode::kEvents}).ok());
  EXPECT_EQ(launch.runs, 3);
  const TimingOptions graph{.timing = TimingMode::kGraph, .graph_launches = 4};
  absl::StatusOr<double> us = timer.Time(launch, graph);
  ASSERT_TRUE(us.ok()) << us.status();
  EXPECT_GE(*us, 0.0);
  EXPECT_EQ(launch.runs, 3 + 12) << "a replay runs the captured launches again";
  ASSERT_TRUE(timer.Time(launch, graph).ok());
  EXPECT_EQ(launch.runs, 3 + 24);
}

// The daemon's picture of a worker's device has no primitives: timing on it is an error.
TEST(LaunchTimerTest, ADeviceThatRunsNoWorkRefusesToTime) {
  class Picture final : public Backend {
   public:
    std::string Name() const override { return "cuda"; }
    std::string Description() const override { return "a worker's device"; }
    int64_t MemoryCapacityBytes() const override { return 0; }
    DeviceDetails Details() const override { return {}; }
  } picture;
  CountingLaunch launch;
  LaunchTimer timer(picture);
  absl::StatusOr<double> us = timer.Time(launch, {});
  EXPECT_EQ(us.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(us.status().message()), testing::HasSubstr("runs no work"));
  EXPECT_EQ(launch.runs, 0);
}

}  // namespace
}  // namespace gpuprobe
