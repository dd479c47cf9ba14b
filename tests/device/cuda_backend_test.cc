// GPU tests (ctest label `gpu`): every kernel variant of the cuda backend against the float64
// reference on fresh random inputs, with outputs poisoned first, over several geometries and
// every union size of their sweeps; one short timed sweep in each timing and cache mode; and the
// read-bandwidth buffers (their checksums against the host's, their reads in every mode).
// Skipped where no CUDA device is visible.
#include "server/device/cuda_backend.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/read_buffer.h"
#include "kernels/sel/launch_deals.h"
#include "server/measure/launch_timer.h"
#include "server/probes/job_events.h"
#include "server/probes/moe_union/exactness.h"
#include "server/probes/moe_union/sweep_runner.h"
#include "server/probes/read_bandwidth/read_buffers.h"
#include "tests/device/cuda_device_test.h"
#include "tests/probes/recorded_events.h"

namespace gpuprobe {
namespace {

using CudaBackendTest = CudaDeviceTest;

struct Geometry {
  int experts, hidden, ff, selected, t;
};

std::string Name(const Geometry& g) {
  return "e" + std::to_string(g.experts) + "_h" + std::to_string(g.hidden) + "_ff" +
         std::to_string(g.ff) + "_s" + std::to_string(g.selected) + "_t" + std::to_string(g.t);
}

void PrintTo(const Geometry& g, std::ostream* os) { *os << Name(g); }

class ExactnessOnGpu : public CudaBackendTest, public testing::WithParamInterface<Geometry> {};

void AddEveryVariant(v1::SweepRequest& request) {
  for (v1::KernelVariant v : {v1::KERNEL_VARIANT_PER_SLOT, v1::KERNEL_VARIANT_UNION,
                              v1::KERNEL_VARIANT_FLOOR, v1::KERNEL_VARIANT_FLOOR_DISTINCT}) {
    request.add_variants(v);
  }
}

class Recorder final : public CheckObserver {
 public:
  void OnCheck(const KernelCheckResult&) override {}
};

TEST_P(ExactnessOnGpu, EveryVariantAndUnionMatchesTheFloat64Reference) {
  const Geometry p = GetParam();
  v1::SweepRequest o;
  o.mutable_geometry()->set_experts(p.experts);
  o.mutable_geometry()->set_hidden(p.hidden);
  o.mutable_geometry()->set_ff(p.ff);
  o.mutable_geometry()->set_selected(p.selected);
  o.add_t_values(p.t);
  o.set_reps(2);
  AddEveryVariant(o);
  o.set_seed(std::random_device{}());  // fresh inputs every run; printed on failure
  absl::StatusOr<SweepSpec> spec = ResolveSweep(o, SweepLimits{});
  ASSERT_TRUE(spec.ok()) << spec.status();
  Recorder recorder;
  std::atomic<bool> cancelled{false};
  absl::StatusOr<std::vector<KernelCheckResult>> results =
      RunExactnessCheck(*spec, "", *backend_, recorder, cancelled);
  ASSERT_TRUE(results.ok()) << results.status();
  const size_t unions = ExpandArms(*spec).size() / 4;
  EXPECT_EQ(results->size(), unions * 4 * 2);
  for (const KernelCheckResult& r : *results) {
    EXPECT_TRUE(r.passed) << VariantName(r.arm.variant) << " " << r.kernel << " t=" << r.arm.t
                          << " union=" << r.arm.union_size << " max_rel=" << r.error.max_rel
                          << " unwritten=" << r.error.unwritten << " " << r.detail
                          << " seed=" << spec->seed;
    EXPECT_EQ(r.error.unwritten, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, ExactnessOnGpu,
    testing::Values(Geometry{512, 2560, 640, 10, 6},  // serving
                    Geometry{64, 1024, 256, 4, 1},    // t = 1
                    Geometry{64, 1024, 256, 4, 8},    // t = 8: up to 8 slots per expert
                    Geometry{32, 544, 96, 2, 8},      // ff and hidden not multiples of 128
                    Geometry{16, 512, 160, 4, 4},
                    Geometry{256, 4096, 1024, 8, 4},    // a larger model: both deals
                    Geometry{128, 2080, 1056, 4, 8},    // both deals, K not a multiple of 128
                    Geometry{64, 2560, 640, 8, 6},      // union 16: fewer K splits where 20
                                                        // warps' rings do not fit
                    Geometry{64, 2560, 640, 16, 6},     // union 16: cluster K halves there
                    Geometry{16, 2560, 640, 2, 1},      // few tiles: K split across warps
                    Geometry{8, 64, 32, 8, 8},          // blocks span groups of 8 slots
                    Geometry{512, 2560, 256, 128, 2}),  // each block stages every input row
                                                        // (3 groups, 2 tokens) at unions past
                                                        // 3/2 of the L2
    [](const testing::TestParamInfo<Geometry>& info) { return Name(info.param); });

// The per-slot gate+up launch of geometry g's largest union (every slot a distinct expert) on
// this card, as the launcher sees it.
TokenWindowCase LargestUnionLaunch(const Geometry& g, const DeviceDetails& d) {
  const int slots = g.t * g.selected;
  return {.groups = slots,
          .selected = g.selected,
          .slots_are_groups = true,
          .tiles_per_group = g.ff / 8,
          .sms = d.multiprocessors,
          .distinct_expert_bytes = int64_t{slots} * 2 * g.ff * (g.hidden / 2 + g.hidden / 16),
          .l2_bytes = d.l2_bytes};
}

// The exactness cases above cover the per-slot gate+up kernel's token windows and its early start
// only if their largest unions take them on this card. (The union kernels' cluster K halves, which
// depend on no property of the card but its even SM count, are covered by the small unions of the
// serving, 256 / 4096, 128 / 2080 and 64 / 2560 geometries; the thresholds are
// tests/kernels/sel/launch_deals_test.cc's.)
TEST_F(CudaBackendTest, TheWindowGeometriesTakeTokenWindowsAtTheirLargestUnion) {
  const DeviceDetails d = backend_->Details();
  for (const Geometry& g : {Geometry{256, 4096, 1024, 8, 4}, Geometry{128, 2080, 1056, 4, 8}}) {
    EXPECT_TRUE(TokenWindowsPay(LargestUnionLaunch(g, d)))
        << Name(g) << " on " << d.multiprocessors << " SMs, " << d.l2_bytes << " bytes of L2";
  }
}

TEST_F(CudaBackendTest, TheServingGeometryStartsEarlyAtItsLargestUnion) {
  const DeviceDetails d = backend_->Details();
  const TokenWindowCase c = LargestUnionLaunch(Geometry{512, 2560, 640, 10, 6}, d);
  EXPECT_FALSE(TokenWindowsPay(c)) << d.multiprocessors << " SMs";
  // 132 blocks of 36-37 tiles span 1-2 groups: fewer rows than its 6 tokens.
  EXPECT_TRUE(EarlyStartPays(c.slots_are_groups, false, c.distinct_expert_bytes, c.l2_bytes))
      << d.l2_bytes << " bytes of L2";
}

TEST_F(CudaBackendTest, RefusesWidthsItsKernelsCannotLoad) {
  const absl::Status s =
      CheckMoeGeometry(backend_->Name(), {64, 528, 128, 4}, KernelVariant::kPerSlot);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("hidden"), std::string_view::npos);
}

TEST_F(CudaBackendTest, EveryTimingAndCacheModeGivesPositiveFiniteSamples) {
  for (TimingMode timing : {TimingMode::kEvents, TimingMode::kGraph}) {
    for (CacheMode cache : {CacheMode::kWarm, CacheMode::kCold}) {
      v1::SweepRequest o;
      o.mutable_geometry()->set_experts(64);
      o.mutable_geometry()->set_hidden(1024);
      o.mutable_geometry()->set_ff(256);
      o.mutable_geometry()->set_selected(4);
      o.set_t_max(2);
      o.set_reps(3);
      o.set_timing(TimingToProto(timing));
      o.set_cache(CacheToProto(cache));
      AddEveryVariant(o);
      absl::StatusOr<SweepSpec> spec = ResolveSweep(o, SweepLimits{});
      ASSERT_TRUE(spec.ok());
      RecordedEvents recorded;
      std::atomic<bool> cancelled{false};
      const JobOutcome outcome = RunSweep(*spec, *backend_, recorded.Publisher(), cancelled);
      ASSERT_TRUE(outcome.status.ok()) << outcome.status;
      ASSERT_EQ(recorded.Results().size(), ExpandArms(*spec).size());
      for (const v1::Result& r : recorded.Results()) {
        for (const v1::MetricStats& m : r.metrics()) {
          EXPECT_TRUE(std::isfinite(m.median()) && m.median() > 0.0) << m.name();
        }
        // A share of the calibrated read for each kernel (gu_pct_of_read, down_pct_of_read).
        EXPECT_EQ(std::count_if(r.derived().begin(), r.derived().end(),
                                [](const v1::DerivedValue& d) {
                                  return d.name().ends_with("_pct_of_read") && d.value() > 0.0;
                                }),
                  2);
      }
    }
  }
}

TEST_F(CudaBackendTest, CalibrationReadsAtLeastTwoGibAndReportsAPlausibleRate) {
  const DeviceDetails d = backend_->Details();
  EXPECT_GE(d.calibration_bytes, int64_t{2} << 30);
  EXPECT_GT(d.calibrated_read_tbps, 0.5);
  EXPECT_LT(d.calibrated_read_tbps, 20.0);
}

// read-bandwidth: the buffers hold the host's words (the read's checksum is the host's sum of
// them, at sizes that end mid-block), every mode gives positive finite samples, and a large
// warm graph-timed read runs near the calibrated read.
class ReadBufferTest : public CudaBackendTest {
 protected:
  void SetUp() override {
    CudaBackendTest::SetUp();
    if (backend_ != nullptr) reads_ = CudaReadBuffers(*backend_);
  }
  std::unique_ptr<ReadBuffers> reads_;
};

TEST_F(ReadBufferTest, TheReadsChecksumIsTheHostsSumOfTheWordsAtEverySize) {
  for (const int64_t bytes : {int64_t{4096}, int64_t{(1 << 20) + 16}, int64_t{256} << 20}) {
    for (const uint64_t seed : {uint64_t{1}, uint64_t{0x9e3779b97f4a7c15}}) {
      absl::StatusOr<int> buffer = reads_->Allocate(bytes, seed);
      ASSERT_TRUE(buffer.ok()) << buffer.status();
      absl::StatusOr<uint32_t> read = reads_->Checksum(*buffer);
      ASSERT_TRUE(read.ok()) << read.status();
      EXPECT_EQ(*read, ReadBufferChecksum(bytes / 4, seed)) << bytes << " bytes, seed " << seed;
    }
  }
  EXPECT_EQ(reads_->Allocate(4100, 1).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ReadBufferTest, EveryTimingAndCacheModeGivesPositiveFiniteSamplesNearTheCalibratedRead) {
  const int64_t bytes = int64_t{1} << 30;
  absl::StatusOr<int> buffer = reads_->Allocate(bytes, 7);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  LaunchTimer timer(*backend_);
  for (TimingMode timing : {TimingMode::kEvents, TimingMode::kGraph}) {
    for (CacheMode cache : {CacheMode::kWarm, CacheMode::kCold}) {
      absl::StatusOr<double> us = timer.Time(reads_->Read(*buffer), {timing, cache, 10});
      ASSERT_TRUE(us.ok()) << us.status();
      EXPECT_TRUE(std::isfinite(*us) && *us > 0.0) << *us;
    }
  }
  absl::StatusOr<double> us =
      timer.Time(reads_->Read(*buffer), {TimingMode::kGraph, CacheMode::kWarm, 10});
  ASSERT_TRUE(us.ok());
  const double tbps = static_cast<double>(bytes) / *us / 1e6;
  EXPECT_GT(tbps, 0.5 * backend_->Details().calibrated_read_tbps) << tbps << " TB/s";
}

// --inject-delay-ns on cuda: a device-side wait inside every timed sample, after launch 0, so an
// events sample grows by the whole wait and a graph sample (the mean of its launches) by the
// wait over its launches; the description says so.
TEST_F(ReadBufferTest, AnInjectedWaitLengthensEverySampleByItsShare) {
  absl::StatusOr<int> buffer = reads_->Allocate(int64_t{4} << 20, 3);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  LaunchTimer timer(*backend_);
  auto median_us = [&](TimingMode timing) {
    std::vector<double> samples;
    for (int i = 0; i < 21; ++i) {
      absl::StatusOr<double> us = timer.Time(reads_->Read(*buffer), {timing, CacheMode::kWarm, 10});
      EXPECT_TRUE(us.ok()) << us.status();
      samples.push_back(us.value_or(0.0));
    }
    std::nth_element(samples.begin(), samples.begin() + 10, samples.end());
    return samples[10];
  };
  const double events = median_us(TimingMode::kEvents);
  const double graph = median_us(TimingMode::kGraph);
  constexpr int64_t kWaitNs = 50'000;
  backend_->set_injected_wait_ns(kWaitNs);
  EXPECT_THAT(backend_->Description(), testing::HasSubstr("injected wait 50000 ns per sample)"));
  const double waited_events = median_us(TimingMode::kEvents);
  const double waited_graph = median_us(TimingMode::kGraph);
  backend_->set_injected_wait_ns(0);
  // The wait's kernel adds its own start, a few microseconds at most.
  EXPECT_GE(waited_events - events, 50.0);
  EXPECT_LT(waited_events - events, 50.0 + 10.0);
  EXPECT_GE(waited_graph - graph, 5.0);
  EXPECT_LT(waited_graph - graph, 5.0 + 1.0);
}

}  // namespace
}  // namespace gpuprobe
