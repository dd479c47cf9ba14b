#include "server/jobs/earlier_workers.h"

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/device/cpu_backend.h"

namespace gpuprobe {
namespace {

// The cpu backend with readings: an earlier daemon's worker (and a stranger) listed on the device
// for `held` readings (-1: always).
class ListingCpu final : public CpuBackend {
 public:
  explicit ListingCpu(int held) : held_(held) {}
  std::optional<TelemetrySample> SampleTelemetry() override {
    TelemetrySample reading;
    reading.foreign_processes.push_back({.pid = 7, .name = "python3"});
    if (held_ < 0 || readings_ < held_) {
      reading.foreign_processes.push_back({.pid = 4242, .name = "/opt/gpuprobe/gpuprobed-worker"});
    }
    ++readings_;
    return reading;
  }
  int readings() const { return readings_; }

 private:
  const int held_;
  int readings_ = 0;
};

TEST(EarlierWorkersTest, ANewWorkerWaitsUntilTheDeviceListsNoEarlierWorker) {
  ListingCpu leaving(3);
  EXPECT_THAT(AwaitEarlierWorkersGone(leaving, absl::Seconds(30)), testing::IsEmpty());
  EXPECT_EQ(leaving.readings(), 4) << "the 4th reading listed none (the stranger does not count)";

  ListingCpu staying(-1);
  const absl::Time start = absl::Now();
  EXPECT_THAT(AwaitEarlierWorkersGone(staying, absl::Milliseconds(300)),
              testing::ElementsAre(4242));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));

  CpuBackend plain;  // no readings: nothing to wait for
  EXPECT_THAT(AwaitEarlierWorkersGone(plain, absl::Seconds(30)), testing::IsEmpty());
}

}  // namespace
}  // namespace gpuprobe
