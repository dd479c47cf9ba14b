#include "server/jobs/earlier_workers.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/device/cpu_backend.h"

namespace gpuprobe {
namespace {

// A pid no process has here: a worker whose process is gone, its context still on the device.
int GonePid() {
  int pid = 1 << 22;  // above the default pid_max
  while (kill(pid, 0) == 0 || errno != ESRCH) ++pid;
  return pid;
}

// The cpu backend with readings: an earlier daemon's worker, gone here, listed on the device for
// `held` readings (-1: always), beside a stranger and the live worker of a live daemon (this test,
// whose parent lives), neither of which is waited for.
class ListingCpu final : public CpuBackend {
 public:
  explicit ListingCpu(int held) : held_(held) {}
  std::optional<TelemetrySample> SampleTelemetry() override {
    TelemetrySample reading;
    reading.foreign_processes.push_back({.pid = 7, .name = "python3"});
    reading.foreign_processes.push_back({.pid = getpid(), .name = "gpuprobed-worker"});
    if (held_ < 0 || readings_ < held_) {
      reading.foreign_processes.push_back({.pid = gone_, .name = "/opt/gpuprobe/gpuprobed-worker"});
    }
    ++readings_;
    return reading;
  }
  int readings() const { return readings_; }
  int gone() const { return gone_; }

 private:
  const int held_;
  const int gone_ = GonePid();
  int readings_ = 0;
};

TEST(EarlierWorkersTest, ANewWorkerWaitsUntilTheDeviceListsNoEarlierWorker) {
  ListingCpu leaving(3);
  EXPECT_THAT(AwaitEarlierWorkersGone(leaving, absl::Seconds(30)), testing::IsEmpty());
  EXPECT_EQ(leaving.readings(), 4) << "the 4th reading listed no earlier worker";

  ListingCpu staying(-1);
  const absl::Time start = absl::Now();
  EXPECT_THAT(AwaitEarlierWorkersGone(staying, absl::Milliseconds(300)),
              testing::ElementsAre(staying.gone()));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));

  CpuBackend plain;  // no readings: nothing to wait for
  EXPECT_THAT(AwaitEarlierWorkersGone(plain, absl::Seconds(30)), testing::IsEmpty());
}

}  // namespace
}  // namespace gpuprobe
