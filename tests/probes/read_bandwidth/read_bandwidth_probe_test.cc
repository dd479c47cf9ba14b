#include "server/probes/read_bandwidth/read_bandwidth_probe.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/device/cpu_backend.h"
#include "server/probes/read_bandwidth/read_bandwidth.pb.h"
#include "tests/probes/recorded_events.h"
#include "tests/probes/resolved_spec.h"

namespace gpuprobe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::ProbeRequest Text(std::initializer_list<std::pair<const std::string, std::string>> values,
                      bool check = false) {
  v1::ProbeRequest r;
  r.set_probe("read-bandwidth");
  r.set_check(check);
  r.mutable_param_values()->insert(values.begin(), values.end());
  return r;
}

// The cpu's reads, but their checksum counts one word too many: a check must catch it.
class MiscountingReads final : public ReadBuffers {
 public:
  DeviceLaunch& Read(int index) override { return reads_->Read(index); }
  absl::StatusOr<uint32_t> Checksum(int index) override {
    absl::StatusOr<uint32_t> sum = reads_->Checksum(index);
    if (!sum.ok()) return sum;
    return *sum + 1;
  }

 private:
  absl::StatusOr<int> AllocateChecked(int64_t bytes, uint64_t seed) override {
    return reads_->Allocate(bytes, seed);
  }
  const std::unique_ptr<ReadBuffers> reads_ = CpuReadBuffers();
};

TEST(ReadBandwidthProbeTest, TheDefaultReadsOneMibToFourGibWarmAndColdInGraphTiming) {
  const ReadBandwidthProbe probe;
  absl::StatusOr<ProbeSpec> any = probe.Resolve(Text({}));
  ASSERT_TRUE(any.ok()) << any.status();
  const v1::ReadBandwidthParams p = Resolved<v1::ReadBandwidthParams>(*any);
  ASSERT_EQ(p.sizes_bytes_size(), 13);
  EXPECT_EQ(p.sizes_bytes(0), uint64_t{1} << 20);
  EXPECT_EQ(p.sizes_bytes(12), uint64_t{4} << 30);
  EXPECT_FALSE(p.default_sizes());  // resolved: the ladder is explicit
  EXPECT_THAT(p.caches(), ElementsAre(v1::CACHE_MODE_WARM, v1::CACHE_MODE_COLD));
  EXPECT_EQ(p.reps(), 20u);
  EXPECT_EQ(p.timing(), v1::TIMING_MODE_GRAPH);
  EXPECT_EQ(p.seed(), 1u);
  // Sizes asked for join the ladder, sorted and without repeats.
  const v1::ReadBandwidthParams more = Resolved<v1::ReadBandwidthParams>(
      *probe.Resolve(Text({{"sizes_bytes", "3000000000,1048576"}})));
  EXPECT_EQ(more.sizes_bytes_size(), 14);
  EXPECT_EQ(more.sizes_bytes(12), 3000000000u);
}

TEST(ReadBandwidthProbeTest, BadParametersNameTheFieldAndTheLimit) {
  const ReadBandwidthProbe probe;
  auto message = [&](std::initializer_list<std::pair<const std::string, std::string>> v) {
    absl::StatusOr<ProbeSpec> r = probe.Resolve(Text(v));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(r.status().message());
  };
  EXPECT_THAT(message({{"sizes_bytes", "4100"}}),
              HasSubstr("sizes_bytes: 4100 is not a multiple of 16 in [4096, 68719476736]"));
  EXPECT_THAT(message({{"sizes_bytes", "1024"}}), HasSubstr("sizes_bytes: 1024"));
  EXPECT_THAT(message({{"default_sizes", "false"}}), HasSubstr("sizes_bytes: none"));
  EXPECT_THAT(message({{"reps", "1"}}), HasSubstr("reps: 1 is outside [2, 10000]"));
  EXPECT_THAT(message({{"caches", "tepid"}}), HasSubstr("param caches: \"tepid\""));
  EXPECT_THAT(message({{"precision", "0.9"}}),
              HasSubstr("precision: 0.9 is outside [0.0001, 0.5]"));
  EXPECT_THAT(message({{"precision", "0.01"}, {"max_seconds", "0"}}),
              HasSubstr("max_seconds: 0 is outside (0, 86400]"));
  EXPECT_THAT(message({{"max_seconds", "5"}}), HasSubstr("max_seconds: bounds sampling"));
}

// Sampling until precise: reps is the least number, more follow until the rule ends the job,
// and every result says what ended it; max_seconds bounds the admission estimate. (Which end
// comes first for which samples is the scheduler's, tested in interleaved_test.)
TEST(ReadBandwidthProbeTest, PrecisionSamplesPastRepsAndResultsSayWhatEndedIt) {
  const ReadBandwidthProbe probe;
  CpuBackend cpu;
  const auto run = [&](std::initializer_list<std::pair<const std::string, std::string>> rule) {
    v1::ProbeRequest request = Text({{"sizes_bytes", "65536"},
                                     {"default_sizes", "false"},
                                     {"reps", "4"},
                                     {"timing", "events"},
                                     {"caches", "warm"}});
    request.mutable_param_values()->insert(rule.begin(), rule.end());
    absl::StatusOr<ProbeSpec> any = probe.Resolve(request);
    EXPECT_TRUE(any.ok()) << any.status();
    RecordedEvents recorded;
    const std::atomic<bool> cancelled{false};
    const JobOutcome outcome =
        probe.Run({.job_id = "job-1", .spec = *any}, cpu, recorded.Publisher(), cancelled);
    EXPECT_TRUE(outcome.status.ok()) << outcome.status;
    return std::make_pair(recorded.Results(), probe.Plan(**any, false, cpu)->device_seconds);
  };
  const auto [exact, exact_seconds] = run({});
  ASSERT_EQ(exact.size(), 1u);
  EXPECT_EQ(exact[0].sampling_end(), v1::SAMPLING_END_REPS);
  EXPECT_EQ(exact[0].metrics(0).kept(), 3u);
  EXPECT_LT(exact_seconds, 1.0);
  // A median's distribution-free interval needs 6 samples: 3 kept reps cannot be precise, so
  // reps follow until the 50% rule is met.
  const auto [precise, precise_seconds] = run({{"precision", "0.5"}, {"max_seconds", "60"}});
  ASSERT_EQ(precise.size(), 1u);
  EXPECT_EQ(precise[0].sampling_end(), v1::SAMPLING_END_PRECISION);
  EXPECT_GE(precise[0].metrics(0).kept(), 6u);
  EXPECT_GE(precise_seconds, 60.0);  // admission counts max_seconds
}

TEST(ReadBandwidthProbeTest, PlanRefusesBuffersLargerThanTheDevice) {
  const ReadBandwidthProbe probe;
  CpuBackend cpu;
  absl::StatusOr<ProbeSpec> huge =
      probe.Resolve(Text({{"sizes_bytes", "68719476736,68719472640"}, {"default_sizes", "false"}}));
  ASSERT_TRUE(huge.ok());
  const absl::StatusOr<ProbePlan> plan = probe.Plan(**huge, false, cpu);
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(plan.status().message(), HasSubstr("sizes_bytes: the buffers take 128.00 GiB"));
  const absl::StatusOr<ProbePlan> small = probe.Plan(
      **probe.Resolve(Text({{"sizes_bytes", "4096"}, {"default_sizes", "false"}})), false, cpu);
  ASSERT_TRUE(small.ok());
  EXPECT_GT(small->device_seconds, 0.0);
}

// Warm only: a cold read on the cpu first overwrites twice the host's last-level cache, which
// on a large server's VM is a GiB a read.
TEST(ReadBandwidthProbeTest, OnTheCpuEachSizeGetsOneResultWithItsBandwidth) {
  const ReadBandwidthProbe probe;
  CpuBackend cpu;
  absl::StatusOr<ProbeSpec> any = probe.Resolve(Text({{"sizes_bytes", "65536,1048576"},
                                                      {"default_sizes", "false"},
                                                      {"reps", "4"},
                                                      {"timing", "events"},
                                                      {"caches", "warm"}}));
  ASSERT_TRUE(any.ok());
  RecordedEvents recorded;
  const std::atomic<bool> cancelled{false};
  const JobOutcome outcome =
      probe.Run({.job_id = "job-1", .spec = *any}, cpu, recorded.Publisher(), cancelled);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(outcome.results, 2);
  ASSERT_TRUE(recorded.events.front().has_started());
  EXPECT_EQ(recorded.events.front().started().arms_size(), 2);
  const std::vector<v1::Result> results = recorded.Results();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].axes(0).int_value(), 1048576);
  EXPECT_EQ(results[1].axes(1).text_value(), "warm");
  for (const v1::Result& r : results) {
    ASSERT_EQ(r.metrics_size(), 1);
    EXPECT_EQ(r.metrics(0).kept(), 3u);  // rep 0 dropped
    EXPECT_GT(r.metrics(0).median(), 0.0);
    EXPECT_LE(r.metrics(0).low(), r.metrics(0).median());
    EXPECT_GE(r.metrics(0).high(), r.metrics(0).median());
    ASSERT_EQ(r.derived_size(), 1);  // no calibrated read on the cpu: no share of it
    EXPECT_NEAR(r.derived(0).value(),
                static_cast<double>(r.axes(0).int_value()) / r.metrics(0).median() / 1e6, 1e-12);
  }
}

TEST(ReadBandwidthProbeTest, TheCheckPassesOnAnHonestReadAndFailsOnAMiscountedOne) {
  const ReadBandwidthProbe probe;
  absl::StatusOr<ProbeSpec> any = probe.Resolve(
      Text({{"sizes_bytes", "4096,1048592"}, {"default_sizes", "false"}}, /*check=*/true));
  ASSERT_TRUE(any.ok());
  const std::atomic<bool> cancelled{false};
  CpuBackend honest;
  RecordedEvents ok;
  JobOutcome outcome = probe.Run({.spec = *any, .check = true}, honest, ok.Publisher(), cancelled);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(outcome.results, 2);
  for (const auto& e : ok.events) {
    if (e.has_check()) {
      EXPECT_TRUE(e.check().passed()) << e.check().detail();
    }
  }
  const ReadBandwidthProbe miscounting(
      [](Backend&) -> absl::StatusOr<std::unique_ptr<ReadBuffers>> {
        return std::make_unique<MiscountingReads>();
      });
  RecordedEvents bad;
  outcome = miscounting.Run({.spec = *any, .check = true}, honest, bad.Publisher(), cancelled);
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(outcome.status.message(), HasSubstr("2 of 2 reads"));
}

}  // namespace
}  // namespace gpuprobe
