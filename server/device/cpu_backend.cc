#include "server/device/cpu_backend.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>

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

// Twice the last-level cache; 64 MiB where the OS does not say.
size_t FlushBytes() {
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  const long llc = l3 > 0 ? l3 : l2;
  return llc > 0 ? 2 * static_cast<size_t>(llc) : size_t{64} << 20;
}

}  // namespace

CpuBackend::CpuBackend(int repeat)
    : repeat_(std::max(1, repeat)), capacity_bytes_(HostCapacityBytes()) {}

std::string CpuBackend::Description() const {
  if (repeat_ == 1) return "cpu (reference kernels)";
  return absl::StrFormat("cpu (reference kernels, each run %dx)", repeat_);
}

void CpuBackend::FlushCache() {
  if (flush_buffer_.empty()) flush_buffer_.resize(FlushBytes());
  for (size_t i = 0; i < flush_buffer_.size(); i += 64) ++flush_buffer_[i];
}

DeviceDetails CpuBackend::Details() const {
  return DeviceDetails{.name = Description(), .memory_bytes = capacity_bytes_};
}

absl::StatusOr<double> CpuBackend::Time(DeviceLaunch& launch, const TimingOptions& options) {
  const int launches = options.timing == TimingMode::kGraph ? options.graph_launches : 1;
  // The host has no launch overhead to amortise, so a graph sample is the mean of `launches`
  // individually timed calls; that keeps each cold call's flush outside its timed region.
  double total_us = 0.0;
  for (int i = 0; i < launches; ++i) {
    if (options.cache == CacheMode::kCold) FlushCache();
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < repeat_; ++r) RETURN_IF_ERROR(launch.Enqueue(nullptr));
    const auto stop = std::chrono::steady_clock::now();
    total_us += std::chrono::duration<double, std::micro>(stop - start).count();
  }
  return total_us / launches;
}

}  // namespace gpuprobe
