#include "server/device/cpu_backend.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

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

// The monotonic clock's reading at each mark.
class HostMarks final : public TimeMarks {
 public:
  explicit HostMarks(int count) : at_(count) {}
  absl::Status Record(int mark) override {
    at_[mark] = std::chrono::steady_clock::now();
    return absl::OkStatus();
  }
  absl::StatusOr<double> ElapsedUs(int from, int to) override {
    return std::chrono::duration<double, std::micro>(at_[to] - at_[from]).count();
  }

 private:
  std::vector<std::chrono::steady_clock::time_point> at_;
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
  if (repeat_ == 1) return "cpu (reference kernels)";
  return absl::StrFormat("cpu (reference kernels, each run %dx)", repeat_);
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
