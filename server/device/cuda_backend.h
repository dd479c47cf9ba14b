// The cuda backend: one CUDA device's memory, stream, timing primitives (events as marks, CUDA
// graphs as captured work) and telemetry. At creation it calibrates the card's streaming read
// bandwidth (a 2 GiB read of the floor kernel) so that rows can report achieved bandwidth as a
// share of what this card really streams.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<CudaBackend> cuda, CudaBackend::Create(/*device=*/0));
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <optional>

#include "kernels/device_wait.h"
#include "server/device/backend.h"
#include "server/device/nvml_telemetry.h"

namespace gpuprobe {

class CudaBackend final : public Backend {
 public:
  // UNAVAILABLE when no CUDA device is visible.
  static absl::StatusOr<std::unique_ptr<CudaBackend>> Create(int device);
  // CUDA devices visible to this process (0 without a driver).
  static int VisibleDevices();
  ~CudaBackend() override;

  std::string Name() const override { return "cuda"; }
  int Ordinal() const override { return device_; }
  std::string Description() const override;
  int64_t MemoryCapacityBytes() const override { return capacity_bytes_; }
  DeviceStream Stream() const override { return stream_; }
  int64_t LastLevelCacheBytes() const override { return details_.l2_bytes; }
  absl::Status Bind() override;
  absl::Status Enqueue(DeviceLaunch& launch) override { return launch.Enqueue(stream_); }
  absl::StatusOr<std::unique_ptr<DeviceMemory>> Allocate(int64_t bytes) override;
  absl::Status Overwrite(DeviceMemory& memory, uint8_t value) override;
  absl::StatusOr<std::unique_ptr<TimeMarks>> NewMarks(int count) override;
  absl::StatusOr<std::unique_ptr<CapturedWork>> Capture(
      absl::AnyInvocable<absl::Status()> enqueue) override;
  absl::Status Synchronize() override;
  absl::Status EnqueueWait(int64_t ns) override { return LaunchDeviceWait(ns, stream_); }
  DeviceDetails Details() const override { return details_; }
  // NVML's reading of this device (found by PCI bus id); none without NVML.
  std::optional<TelemetrySample> SampleTelemetry() override;
  void SetOwnProcessGroup(int group) override { own_group_ = group; }

 private:
  CudaBackend() = default;
  absl::Status Init(int device);
  absl::Status Calibrate();

  int device_ = 0;
  std::string description_notes_;             // "cuda:N, sm_XY, ...": the description's notes
  std::unique_ptr<NvmlTelemetry> telemetry_;  // null: no NVML here
  int own_group_ = 0;                         // SetOwnProcessGroup
  DeviceDetails details_;
  int64_t capacity_bytes_ = 0;
  cudaStream_t stream_ = nullptr;
  bool capturing_ = false;  // Capture is running: marks become the graph's record nodes
};

}  // namespace gpuprobe
