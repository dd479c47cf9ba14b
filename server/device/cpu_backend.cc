#include "server/device/cpu_backend.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"

namespace gpuprobe {
namespace {

// Half the host's physical memory: the rest stays for the daemon, the OS and other work.
int64_t HostCapacityBytes() {
  const int64_t pages = sysconf(_SC_PHYS_PAGES);
  const int64_t page_bytes = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_bytes > 0 ? pages * page_bytes / 2 : int64_t{4} << 30;
}

constexpr int64_t kCacheLineBytes = 64;

class HostMemory final : public DeviceMemory {
 public:
  explicit HostMemory(int64_t bytes)
      : bytes_(bytes), data_(std::make_unique_for_overwrite<uint8_t[]>(bytes)) {}
  int64_t bytes() const override { return bytes_; }
  uint8_t* data() { return data_.get(); }

 private:
  const int64_t bytes_;
  std::unique_ptr<uint8_t[]> data_;
};

// The calling thread's CPU time, nanoseconds: it advances only while the thread runs, so time
// the thread spent waiting for a core (another process on a loaded host, a hypervisor's steal)
// is not in a sample. Work on the cpu runs on the thread that enqueues it.
int64_t ThreadCpuNs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

// The timing thread's CPU time at each mark; a sample's marks are recorded on one thread.
class HostMarks final : public TimeMarks {
 public:
  explicit HostMarks(int count) : at_ns_(count) {}
  absl::Status Record(int mark) override {
    at_ns_[mark] = ThreadCpuNs();
    return absl::OkStatus();
  }
  absl::StatusOr<double> ElapsedUs(int from, int to) override {
    return static_cast<double>(at_ns_[to] - at_ns_[from]) / 1e3;
  }

 private:
  std::vector<int64_t> at_ns_;
};

// The host has nothing to capture: a replay runs the work again.
class HostWork final : public CapturedWork {
 public:
  explicit HostWork(absl::AnyInvocable<absl::Status()> work) : work_(std::move(work)) {}
  absl::Status Replay() override { return work_(); }

 private:
  absl::AnyInvocable<absl::Status()> work_;
};

}  // namespace

CpuBackend::CpuBackend(int repeat)
    : repeat_(std::max(1, repeat)), capacity_bytes_(HostCapacityBytes()) {}

std::string CpuBackend::Description() const {
  std::string notes = "reference kernels";
  if (repeat_ > 1) absl::StrAppendFormat(&notes, ", each run %dx", repeat_);
  return absl::StrCat("cpu (", notes, InjectedWaitNote(), ")");
}

DeviceDetails CpuBackend::Details() const {
  return DeviceDetails{.name = Description(), .memory_bytes = capacity_bytes_};
}

int64_t CpuBackend::LastLevelCacheBytes() const {
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  const long llc = l3 > 0 ? l3 : l2;
  return llc > 0 ? llc : int64_t{32} << 20;
}

absl::Status CpuBackend::Enqueue(DeviceLaunch& launch) {
  for (int r = 0; r < repeat_; ++r) RETURN_IF_ERROR(launch.Enqueue(nullptr));
  return absl::OkStatus();
}

absl::Status CpuBackend::EnqueueWait(int64_t ns) {
  // On the timer's own clock, so the sample grows by `ns` whatever else the host runs.
  const int64_t until = ThreadCpuNs() + ns;
  while (ThreadCpuNs() < until) {
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<DeviceMemory>> CpuBackend::Allocate(int64_t bytes) {
  return std::make_unique<HostMemory>(bytes);
}

absl::Status CpuBackend::Overwrite(DeviceMemory& memory, uint8_t value) {
  // One byte a line: a large memset may use stores that bypass the cache.
  HostMemory& host = static_cast<HostMemory&>(memory);
  for (int64_t i = 0; i < host.bytes(); i += kCacheLineBytes) host.data()[i] = value;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TimeMarks>> CpuBackend::NewMarks(int count) {
  return std::make_unique<HostMarks>(count);
}

absl::StatusOr<std::unique_ptr<CapturedWork>> CpuBackend::Capture(
    absl::AnyInvocable<absl::Status()> enqueue) {
  return std::make_unique<HostWork>(std::move(enqueue));
}

}  // namespace gpuprobe
