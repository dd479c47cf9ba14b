// The cpu backend: host memory, timed with a monotonic clock. It lets the whole service run and
// be tested on machines with no GPU (the probes' cpu device code runs their reference kernels);
// its rows always say "cpu (reference kernels)" so nobody mistakes them for GPU figures.
//
//   CpuBackend cpu;
//   ASSIGN_OR_RETURN(double us, cpu.Time(launch, {.cache = CacheMode::kCold}));
#pragma once

#include <vector>

#include "server/device/backend.h"

namespace gpuprobe {

class CpuBackend : public Backend {
 public:
  // `repeat` > 1 runs each timed launch that many times per sample: an honest, known slowdown
  // for testing what consumes the rows (a CI gate must call it slower). Rows and the
  // description say so.
  explicit CpuBackend(int repeat = 1);

  std::string Name() const override { return "cpu"; }
  std::string Description() const override;
  int64_t MemoryCapacityBytes() const override { return capacity_bytes_; }
  absl::StatusOr<double> Time(DeviceLaunch& launch, const TimingOptions& options) override;
  DeviceDetails Details() const override;

 private:
  // Overwrites a buffer twice the last-level cache so the next launch starts cold.
  void FlushCache();

  const int repeat_;
  int64_t capacity_bytes_;
  std::vector<uint8_t> flush_buffer_;
};

}  // namespace gpuprobe
