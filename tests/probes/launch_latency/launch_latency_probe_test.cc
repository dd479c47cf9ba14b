#include "server/probes/launch_latency/launch_latency_probe.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/device/cpu_backend.h"
#include "server/probes/launch_latency/launch_latency.pb.h"
#include "tests/probes/recorded_events.h"
#include "tests/probes/resolved_spec.h"

namespace gpuprobe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::ProbeRequest Text(std::initializer_list<std::pair<const std::string, std::string>> values) {
  v1::ProbeRequest r;
  r.set_probe("launch-latency");
  r.mutable_param_values()->insert(values.begin(), values.end());
  return r;
}

TEST(LaunchLatencyProbeTest, TheDefaultTimesOneBlockInEventsAndInAGraph) {
  const LaunchLatencyProbe probe;
  absl::StatusOr<ProbeSpec> any = probe.Resolve(Text({}));
  ASSERT_TRUE(any.ok()) << any.status();
  const v1::LaunchLatencyParams p = Resolved<v1::LaunchLatencyParams>(*any);
  EXPECT_THAT(p.timings(), ElementsAre(v1::TIMING_MODE_EVENTS, v1::TIMING_MODE_GRAPH));
  EXPECT_THAT(p.grid_sizes(), ElementsAre(1u));
  EXPECT_EQ(p.block_threads(), 32u);
  EXPECT_EQ(p.reps(), 100u);
  EXPECT_EQ(p.order(), v1::ARM_ORDER_FIXED);
  EXPECT_EQ(p.seed(), 1u);
  EXPECT_FALSE(p.has_max_seconds());  // no precision asked for: exactly the reps
  // A value given twice is one arm.
  EXPECT_THAT(Resolved<v1::LaunchLatencyParams>(*probe.Resolve(Text({{"grid_sizes", "8,1,8"}})))
                  .grid_sizes(),
              ElementsAre(8u, 1u));
  // Its parameters as ListProbes shows them come from the message's declarations.
  ASSERT_GE(probe.Info().params_size(), 4);
  EXPECT_EQ(probe.Info().params(1).name(), "grid_sizes");
  EXPECT_EQ(probe.Info().params(1).limits(), "each in [1, 1048576], at most 16 items");
  EXPECT_FALSE(probe.Info().has_check());
}

TEST(LaunchLatencyProbeTest, BadParametersNameTheFieldAndTheLimit) {
  const LaunchLatencyProbe probe;
  auto message = [&](std::initializer_list<std::pair<const std::string, std::string>> v) {
    absl::StatusOr<ProbeSpec> r = probe.Resolve(Text(v));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(r.status().message());
  };
  EXPECT_EQ(message({{"grid_sizes", "0"}}), "grid_sizes: 0 is outside [1, 1048576]");
  EXPECT_EQ(message({{"block_threads", "1025"}}), "block_threads: 1025 is outside [1, 1024]");
  EXPECT_EQ(message({{"timings", "events,graph,events"}}), "timings: 3 items; at most 2");
  EXPECT_EQ(message({{"reps", "100001"}}), "reps: 100001 is outside [2, 100000]");
  EXPECT_EQ(message({{"grid_sizes", "1,2,3,4,5,6,7,8,9,10,11"}, {"reps", "100000"}}),
            "reps: 22 arms x 100000 reps is more than 1000000 launches");
  EXPECT_THAT(message({{"max_seconds", "5"}}), HasSubstr("max_seconds: bounds sampling"));
  EXPECT_EQ(message({{"precision", "0.01"}, {"max_seconds", "601"}}),
            "max_seconds: 601 is outside (0, 600]");
}

TEST(LaunchLatencyProbeTest, OnTheCpuEachGridAndTimingGetsOneResult) {
  const LaunchLatencyProbe probe;
  CpuBackend cpu;
  absl::StatusOr<ProbeSpec> any = probe.Resolve(Text({{"grid_sizes", "1,4096"}, {"reps", "4"}}));
  ASSERT_TRUE(any.ok()) << any.status();
  const absl::StatusOr<ProbePlan> plan = probe.Plan(**any, false, cpu);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_GT(plan->device_seconds, 0.0);
  RecordedEvents recorded;
  const std::atomic<bool> cancelled{false};
  const JobOutcome outcome =
      probe.Run({.job_id = "job-1", .spec = *any}, cpu, recorded.Publisher(), cancelled);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(outcome.results, 4);
  ASSERT_TRUE(recorded.events.front().has_started());
  EXPECT_EQ(recorded.events.front().started().arms_size(), 4);
  std::vector<std::pair<int64_t, std::string>> arms;
  for (const v1::Result& r : recorded.Results()) {
    ASSERT_EQ(r.axes_size(), 2);
    arms.emplace_back(r.axes(0).int_value(), r.axes(1).text_value());
    ASSERT_EQ(r.metrics_size(), 1);
    EXPECT_EQ(r.metrics(0).name(), "launch_us");
    EXPECT_EQ(r.metrics(0).kept(), 3u);  // rep 0 dropped
    EXPECT_GE(r.metrics(0).median(), 0.0);
    EXPECT_EQ(r.derived_size(), 0);  // an empty kernel moves no bytes
    EXPECT_EQ(r.sampling_end(), v1::SAMPLING_END_REPS);
  }
  EXPECT_THAT(arms, ElementsAre(std::make_pair(1, "events"), std::make_pair(1, "graph"),
                                std::make_pair(4096, "events"), std::make_pair(4096, "graph")));
}

}  // namespace
}  // namespace gpuprobe
