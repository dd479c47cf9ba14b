// The cuda backend: one CUDA device's memory, stream, timers and telemetry. At creation it
// calibrates the card's streaming read bandwidth (a 2 GiB read of the floor kernel) so that rows
// can report achieved bandwidth as a share of what this card really streams.
//
// Timing: `events` puts one event pair around each launch (launch overhead included, as the
// seed measured); `graph` captures kGraphLaunches launches in a CUDA graph and reports the
// graph's time / N. Cache: `cold` overwrites a buffer of twice the L2 before each timed launch,
// outside the timed region (in graph mode, event nodes inside the graph bracket each launch).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<CudaBackend> cuda, CudaBackend::Create(/*device=*/0));
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "kernels/read_floor.h"
#include "server/device/backend.h"
#include "server/device/device_buffer.h"
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
  std::string Description() const override { return description_; }
  int64_t MemoryCapacityBytes() const override { return capacity_bytes_; }
  absl::StatusOr<double> Time(DeviceLaunch& launch, const TimingOptions& options) override;
  DeviceStream Stream() const override { return stream_; }
  DeviceDetails Details() const override { return details_; }
  // NVML's reading of this device (found by PCI bus id); none without NVML.
  std::optional<TelemetrySample> SampleTelemetry() override;
  void SetOwnProcessGroup(int group) override { own_group_ = group; }

 private:
  struct Graph;
  // A DeviceLaunch's captured graphs, by (cold, launches): its timer_state.
  using LaunchGraphs = std::map<std::pair<bool, int>, Graph>;
  // Enqueues one launch of what is being timed on the stream.
  using LaunchFn = absl::FunctionRef<absl::Status(cudaStream_t)>;

  CudaBackend() = default;
  absl::Status Init(int device);
  absl::Status Calibrate();
  absl::Status Flush(cudaStream_t stream);
  // One sample: one event-timed launch, or a captured graph of `launches` launches (time / N).
  absl::StatusOr<double> TimeEvents(LaunchFn launch, bool cold);
  absl::StatusOr<double> TimeGraph(Graph& graph, LaunchFn launch, bool cold, int launches);

  int device_ = 0;
  std::string description_;
  std::unique_ptr<NvmlTelemetry> telemetry_;  // null: no NVML here
  int own_group_ = 0;                         // SetOwnProcessGroup
  DeviceDetails details_;
  int64_t capacity_bytes_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  DeviceBuffer flush_;
  uint8_t flush_value_ = 0;
};

}  // namespace gpuprobe
