// The interleaved scheduler's sampling rules: exactly `reps` without a precision; with one, more
// reps until every arm's every launch is precise enough, or until the time or rep bound, and
// the run says which ended it.
#include "server/measure/interleaved.h"

#include <atomic>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "server/device/backend.h"

namespace gpuprobe {
namespace {

// A device that does nothing: the samples come from the test's TimeLaunchFn.
class IdleDevice : public Backend {
 public:
  std::string Name() const override { return "idle"; }
  std::string Description() const override { return "idle device"; }
  int64_t MemoryCapacityBytes() const override { return 0; }
  DeviceDetails Details() const override { return {}; }
};

class CountingObserver : public RepObserver {
 public:
  void OnRepDone(int done, int total) override {
    last_done = done;
    last_total = total;
  }
  int last_done = 0;
  int last_total = 0;
};

// Samples that never settle: 1, 2, 1, 2, ... for each launch of each arm (a half-width of a
// third of the median).
TimeLaunchFn Alternating() {
  return [calls = std::map<std::pair<int, int>, int>()](
             int arm, int launch) mutable -> absl::StatusOr<double> {
    return 1.0 + (calls[{arm, launch}]++ % 2);
  };
}

TimeLaunchFn Constant() {
  return [](int, int) -> absl::StatusOr<double> { return 5.0; };
}

absl::StatusOr<Interleaved> Sample(const InterleavedSpec& spec, const TimeLaunchFn& time,
                                   CountingObserver& observer) {
  IdleDevice device;
  std::atomic<bool> cancelled{false};
  return RunInterleaved(spec, time, device, observer, cancelled);
}

TEST(SamplingRuleTest, WithoutPrecisionExactlyTheRepsRun) {
  CountingObserver observer;
  absl::StatusOr<Interleaved> run =
      Sample({.arms = 2, .launches = 2, .reps = 4}, Alternating(), observer);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->kept_reps, 3);
  EXPECT_EQ(run->samples[1][1].size(), 3u);
  EXPECT_EQ(run->ended_by, SamplingEnd::kReps);
  EXPECT_EQ(observer.last_done, 4);
  EXPECT_EQ(observer.last_total, 4);
}

TEST(SamplingRuleTest, PreciseSamplesStopAsSoonAsTheIntervalExists) {
  CountingObserver observer;
  // Constant samples have a half-width of 0 once there are 6 of them (rep 0 + 6 kept reps),
  // however few reps were asked for.
  absl::StatusOr<Interleaved> run = Sample(
      {.arms = 3, .reps = 3, .sampling = {.precision = 0.01, .max_seconds = 1e9, .max_reps = 50}},
      Constant(), observer);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->ended_by, SamplingEnd::kPrecision);
  EXPECT_EQ(run->kept_reps, 6);
  EXPECT_EQ(run->samples[2][0].size(), 6u);
  EXPECT_EQ(observer.last_done, 7);
  EXPECT_EQ(observer.last_total, 50);  // progress counts against the bound
}

TEST(SamplingRuleTest, TheRepsAskedForAreTheLeastThatRun) {
  CountingObserver observer;
  absl::StatusOr<Interleaved> run = Sample(
      {.arms = 1, .reps = 12, .sampling = {.precision = 0.01, .max_seconds = 1e9, .max_reps = 50}},
      Constant(), observer);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->ended_by, SamplingEnd::kPrecision);
  EXPECT_EQ(run->kept_reps, 11);
}

TEST(SamplingRuleTest, NoisySamplesRunToTheRepBound) {
  CountingObserver observer;
  absl::StatusOr<Interleaved> run = Sample(
      {.arms = 2, .reps = 3, .sampling = {.precision = 0.01, .max_seconds = 1e9, .max_reps = 20}},
      Alternating(), observer);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->ended_by, SamplingEnd::kMaxReps);
  EXPECT_EQ(run->kept_reps, 19);
  EXPECT_EQ(observer.last_done, 20);
}

TEST(SamplingRuleTest, EveryLaunchOfEveryArmMustBePrecise) {
  CountingObserver observer;
  // Arm 0 and every gate+up are constant; only the down of arm 1 is noisy.
  TimeLaunchFn one_noisy = [alternating = Alternating()](
                               int arm, int launch) mutable -> absl::StatusOr<double> {
    return arm == 1 && launch == 1 ? alternating(arm, launch) : 5.0;
  };
  absl::StatusOr<Interleaved> run =
      Sample({.arms = 2,
              .launches = 2,
              .reps = 3,
              .sampling = {.precision = 0.01, .max_seconds = 1e9, .max_reps = 15}},
             one_noisy, observer);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->ended_by, SamplingEnd::kMaxReps);
  EXPECT_EQ(run->kept_reps, 14);
}

TEST(SamplingRuleTest, TheTimeBoundEndsSamplingOnceTheRepsAskedForAreDone) {
  CountingObserver observer;
  // A bound of 0 s has passed after every rep, so the reps asked for are all that run.
  absl::StatusOr<Interleaved> run = Sample(
      {.arms = 2, .reps = 5, .sampling = {.precision = 0.01, .max_seconds = 0.0, .max_reps = 50}},
      Alternating(), observer);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->ended_by, SamplingEnd::kMaxSeconds);
  EXPECT_EQ(run->kept_reps, 4);
}

}  // namespace
}  // namespace gpuprobe
