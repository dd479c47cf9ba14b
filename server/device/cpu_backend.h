// The cpu backend: host memory, and the timing thread's CPU time as its timer (work runs as it
// is enqueued, on the calling thread, so a sample is the CPU time the work took: another process
// that competes for the host's cores does not lengthen it; one that competes for its caches and
// memory still can). It lets the whole service run and be tested on machines with
// no GPU (the probes' cpu device code runs their reference kernels); its rows always say
// "cpu (reference kernels)" so nobody mistakes them for GPU figures.
//
//   CpuBackend cpu;
//   LaunchTimer timer(cpu);
//   ASSIGN_OR_RETURN(double us, timer.Time(launch, {.cache = CacheMode::kCold}));
#pragma once

#include "server/device/backend.h"

namespace gpuprobe {

class CpuBackend : public Backend {
 public:
  // `repeat` > 1 runs each enqueued launch that many times: an honest, known slowdown for
  // testing what consumes the rows (a CI gate must call it slower). Rows and the description
  // say so.
  explicit CpuBackend(int repeat = 1);

  std::string Name() const override { return "cpu"; }
  std::string Description() const override;
  int64_t MemoryCapacityBytes() const override { return capacity_bytes_; }
  DeviceDetails Details() const override;
  // L3, else L2, as the OS reports it; 32 MiB where it does not.
  int64_t LastLevelCacheBytes() const override;

  absl::Status Bind() override { return absl::OkStatus(); }
  absl::Status Enqueue(DeviceLaunch& launch) override;
  absl::StatusOr<std::unique_ptr<DeviceMemory>> Allocate(int64_t bytes) override;
  absl::Status Overwrite(DeviceMemory& memory, uint8_t value) override;
  absl::StatusOr<std::unique_ptr<TimeMarks>> NewMarks(int count) override;
  // Keeps `enqueue`; a replay calls it.
  absl::StatusOr<std::unique_ptr<CapturedWork>> Capture(
      absl::AnyInvocable<absl::Status()> enqueue) override;
  absl::Status Synchronize() override { return absl::OkStatus(); }
  absl::Status EnqueueWait(int64_t ns) override;

 private:
  const int repeat_;
  int64_t capacity_bytes_;
};

}  // namespace gpuprobe
