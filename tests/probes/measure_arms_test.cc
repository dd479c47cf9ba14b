#include "server/probes/measure_arms.h"

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/device/cpu_backend.h"
#include "server/probes/results.h"
#include "tests/probes/recorded_events.h"

namespace gpuprobe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Work on the cpu whose every run also calls `on_run` (to count runs or cancel the job).
class CountingLaunch final : public DeviceLaunch {
 public:
  explicit CountingLaunch(std::function<void()> on_run = nullptr) : on_run_(std::move(on_run)) {}
  absl::Status Enqueue(DeviceStream) override {
    volatile double x = 1.0;
    for (int i = 0; i < 2000; ++i) x = x * 1.0000001;
    ++runs;
    if (on_run_) on_run_();
    return absl::OkStatus();
  }
  int runs = 0;

 private:
  std::function<void()> on_run_;
};

const v1::DerivedValue* Find(const v1::Result& r, const std::string& name) {
  for (const v1::DerivedValue& d : r.derived()) {
    if (d.name() == name) return &d;
  }
  return nullptr;
}

// Two arms of two launches each ("gu_us" moving bytes, "down_us" doing flops), in `blocks`
// blocks of `reps` reps; each block's launches are new objects, as a placement makes them.
struct TwoArms {
  MeasurementSpec spec;
  std::vector<std::unique_ptr<CountingLaunch>> launches;
  std::vector<int> placed_blocks;

  TwoArms(int reps, int blocks) {
    for (int i = 0; i < 2; ++i) {
      spec.arms.push_back({.axes = {IntAxis("n", 10 * (i + 1))},
                           .launches = {{.metric = "gu_us", .bytes_read = 1000 * (i + 1)},
                                        {.metric = "down_us", .flops = 5e6}}});
    }
    spec.reps = reps;
    spec.blocks = blocks;
  }
  PlaceLaunches Place(std::function<void()> on_run = nullptr) {
    return [this, on_run](int block) -> absl::StatusOr<std::vector<std::vector<DeviceLaunch*>>> {
      placed_blocks.push_back(block);
      std::vector<std::vector<DeviceLaunch*>> placed(2);
      for (auto& arm : placed) {
        for (int l = 0; l < 2; ++l) {
          launches.push_back(std::make_unique<CountingLaunch>(on_run));
          arm.push_back(launches.back().get());
        }
      }
      return placed;
    };
  }
};

TEST(MeasureArmsTest, EachArmGetsAMetricPerLaunchAndTheDerivedValuesItsDeclarationImplies) {
  CpuBackend cpu;
  TwoArms arms(/*reps=*/4, /*blocks=*/3);
  RecordedEvents recorded;
  const std::atomic<bool> cancelled{false};
  std::vector<std::vector<std::vector<double>>> block_medians;
  const JobOutcome outcome =
      MeasureArms(arms.spec, arms.Place(), cpu, recorded.Publisher(), cancelled,
                  [&](const Measurement& m, std::vector<v1::Result>& results) {
                    block_medians = m.block_medians;
                    for (v1::Result& r : results) *r.add_derived() = Derived("probe_own", "", 7.0);
                  });
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(outcome.results, 2);
  EXPECT_THAT(arms.placed_blocks, ElementsAre(0, 1, 2));  // a placement per block
  // Every launch of every block ran its reps, rep 0 included.
  for (const auto& launch : arms.launches) EXPECT_EQ(launch->runs, 4);

  const std::vector<v1::Result> results = recorded.Results();
  ASSERT_EQ(results.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const v1::Result& r = results[i];
    EXPECT_EQ(r.arm_index(), static_cast<uint32_t>(i));
    ASSERT_EQ(r.axes_size(), 1);
    EXPECT_EQ(r.axes(0).int_value(), 10 * (i + 1));
    ASSERT_EQ(r.metrics_size(), 2);
    EXPECT_EQ(r.metrics(0).name(), "gu_us");
    EXPECT_EQ(r.metrics(1).name(), "down_us");
    EXPECT_EQ(r.metrics(0).kept(), 9u);  // 3 blocks of 3 kept reps
    EXPECT_EQ(r.device(), cpu.Description());
    EXPECT_EQ(r.sampling_end(), v1::SAMPLING_END_REPS);
    // Two launches: each derived value carries its metric's stem. No calibrated read on the
    // cpu, so no share of it.
    const v1::DerivedValue* tbps = Find(r, "gu_tbps");
    ASSERT_NE(tbps, nullptr);
    EXPECT_DOUBLE_EQ(tbps->value(), 1000.0 * (i + 1) / r.metrics(0).median() / 1e6);
    EXPECT_EQ(Find(r, "gu_pct_of_read"), nullptr);
    EXPECT_EQ(Find(r, "gu_tflops"), nullptr);
    const v1::DerivedValue* tflops = Find(r, "down_tflops");
    ASSERT_NE(tflops, nullptr);
    EXPECT_DOUBLE_EQ(tflops->value(), 5e6 / r.metrics(1).median() / 1e6);
    ASSERT_NE(Find(r, "probe_own"), nullptr);
    EXPECT_EQ(r.derived(r.derived_size() - 1).name(), "probe_own");  // the probe's come last
  }
  ASSERT_EQ(block_medians.size(), 2u);
  EXPECT_EQ(block_medians[0][1].size(), 3u);  // one median per block
  // ... and each result carries its blocks' sections (the sum of its launches' medians there),
  // for comparisons of two jobs by their blocks.
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(results[i].block_section_us_size(), 3);
    for (int b = 0; b < 3; ++b) {
      EXPECT_DOUBLE_EQ(results[i].block_section_us(b),
                       block_medians[i][0][b] + block_medians[i][1][b]);
    }
  }

  // Progress counts the reps of every block against all of them.
  const std::vector<v1::JobProgress> progress = recorded.Progress();
  ASSERT_EQ(progress.size(), 12u);
  EXPECT_EQ(progress.front().reps_done(), 1u);
  EXPECT_EQ(progress.back().reps_done(), 12u);
  EXPECT_EQ(progress.back().reps_total(), 12u);
}

TEST(MeasureArmsTest, OneLaunchArmsTakeTheDerivedNamesUnprefixed) {
  const LaunchDeclaration read{.metric = "read_us", .bytes_read = 4'000'000};
  const std::vector<v1::DerivedValue> derived = DeclaredDerived(read, true, 2.0, 4.0);
  ASSERT_EQ(derived.size(), 2u);
  EXPECT_EQ(derived[0].name(), "tbps");
  EXPECT_DOUBLE_EQ(derived[0].value(), 2.0);
  EXPECT_EQ(derived[1].name(), "pct_of_read");
  EXPECT_DOUBLE_EQ(derived[1].value(), 50.0);
  EXPECT_TRUE(DeclaredDerived({.metric = "empty_us"}, true, 2.0, 4.0).empty());
}

TEST(MeasureArmsTest, ACancelledJobPublishesTheRepsThatCompletedAndSaysCancelled) {
  CpuBackend cpu;
  TwoArms arms(/*reps=*/10, /*blocks=*/1);
  RecordedEvents recorded;
  std::atomic<bool> cancelled{false};
  int runs = 0;
  // 4 launches a rep: cancelled at the first launch of rep 4, so reps 1..3 are kept (rep 0 is
  // the throwaway, and the partial rep 4 is dropped so that every arm covers the same reps).
  const JobOutcome outcome = MeasureArms(arms.spec, arms.Place([&] {
    if (++runs == 4 * 4 + 1) cancelled = true;
  }),
                                         cpu, recorded.Publisher(), cancelled);
  EXPECT_TRUE(absl::IsCancelled(outcome.status)) << outcome.status;
  const std::vector<v1::Result> results = recorded.Results();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(outcome.results, 2);
  EXPECT_EQ(results[0].metrics(0).kept(), 3u);
  EXPECT_EQ(results[0].sampling_end(), v1::SAMPLING_END_UNSPECIFIED);  // not ended by its rule

  // Cancelled before any rep after rep 0 completed: nothing to publish.
  TwoArms early(/*reps=*/10, /*blocks=*/1);
  RecordedEvents none;
  std::atomic<bool> at_once{false};
  const JobOutcome nothing =
      MeasureArms(early.spec, early.Place([&] { at_once = true; }), cpu, none.Publisher(), at_once);
  EXPECT_TRUE(absl::IsCancelled(nothing.status));
  EXPECT_TRUE(none.Results().empty());
}

TEST(MeasureArmsTest, AMalformedSpecOrAFailedPlacementFailsTheJobWithoutResults) {
  CpuBackend cpu;
  const std::atomic<bool> cancelled{false};
  RecordedEvents recorded;
  TwoArms uneven(/*reps=*/4, /*blocks=*/1);
  uneven.spec.arms[1].launches.pop_back();
  JobOutcome outcome =
      MeasureArms(uneven.spec, uneven.Place(), cpu, recorded.Publisher(), cancelled);
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(outcome.status.message(), HasSubstr("arm 1 has 1 launches, arm 0 2"));

  TwoArms one_rep(/*reps=*/1, /*blocks=*/1);
  outcome = MeasureArms(one_rep.spec, one_rep.Place(), cpu, recorded.Publisher(), cancelled);
  EXPECT_THAT(outcome.status.message(), HasSubstr("reps: 1; at least 2"));

  TwoArms arms(/*reps=*/4, /*blocks=*/2);
  PlaceLaunches place = arms.Place();
  outcome = MeasureArms(
      arms.spec,
      [&](int block) -> absl::StatusOr<std::vector<std::vector<DeviceLaunch*>>> {
        if (block == 1) return absl::ResourceExhaustedError("no memory for block 1");
        return place(block);
      },
      cpu, recorded.Publisher(), cancelled);
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(recorded.Results().empty());
  EXPECT_EQ(outcome.results, 0);
}

}  // namespace
}  // namespace gpuprobe
