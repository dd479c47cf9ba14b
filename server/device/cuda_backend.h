// The cuda backend: one CUDA device's memory, stream, timers and telemetry; and, for the
// moe-union probe, the NVFP4 sel kernels, their union-gather plans and the pure-read floor.
//
// Banks for all experts are allocated once per (geometry, seed) and reused by later jobs. At
// creation it calibrates the card's streaming read bandwidth (a 2 GiB read) so that rows can
// report achieved bandwidth as a share of what this card really streams.
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
#include "kernels/moe_banks.h"
#include "kernels/moe_sel_kernels.h"
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
  absl::Status CheckVariant(KernelVariant variant) const override;
  absl::Status CheckGeometry(const MoeGeometry& geometry, KernelVariant variant) const override {
    return CheckCudaGeometry(geometry, variant);
  }
  // What the cuda kernels support (CanImplementSelKernels with the variant's group width).
  static absl::Status CheckCudaGeometry(const MoeGeometry& geometry, KernelVariant variant);

  absl::Status LoadBanks(const MoeGeometry& geometry, uint64_t seed) override;
  absl::StatusOr<ArmHandle> PrepareArm(const ArmInputs& inputs) override;
  absl::StatusOr<double> TimeLaunch(ArmHandle arm, MoeKernel kernel,
                                    const TimingOptions& options) override;
  absl::StatusOr<LaunchOutput> RunOnce(ArmHandle arm, MoeKernel kernel) override;
  void ReleaseArms() override;
  absl::StatusOr<double> Time(DeviceLaunch& launch, const TimingOptions& options) override;
  DeviceStream Stream() const override { return stream_; }
  DeviceDetails Details() const override { return details_; }
  // NVML's reading of this device (found by PCI bus id); none without NVML.
  std::optional<TelemetrySample> SampleTelemetry() override;
  void SetOwnProcessGroup(int group) override { own_group_ = group; }

 private:
  struct Graph;
  struct Arm;
  struct Banks;
  // A DeviceLaunch's captured graphs, by (cold, launches): its timer_state.
  using LaunchGraphs = std::map<std::pair<bool, int>, Graph>;
  // Enqueues one launch of what is being timed on the stream.
  using LaunchFn = absl::FunctionRef<absl::Status(cudaStream_t)>;

  CudaBackend() = default;
  absl::Status Init(int device);
  absl::Status Calibrate();
  absl::StatusOr<Arm*> Find(ArmHandle handle);
  absl::Status Launch(Arm& arm, MoeKernel kernel, cudaStream_t stream);
  absl::Status Flush(cudaStream_t stream);
  // One sample: one event-timed launch, or a captured graph of `launches` launches (time / N).
  absl::StatusOr<double> TimeEvents(LaunchFn launch, bool cold);
  absl::StatusOr<double> TimeGraph(Graph& graph, LaunchFn launch, bool cold, int launches);
  ReadFloorArgs FloorArgs(const Arm& arm, MoeKernel kernel) const;

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
  std::unique_ptr<Banks> banks_;
  std::vector<std::unique_ptr<Arm>> arms_;
};

}  // namespace gpuprobe
