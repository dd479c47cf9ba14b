// The cpu backend: the float64 reference kernels on host memory, timed with a monotonic clock.
// It lets the whole service run and be tested on machines with no GPU; its rows always say
// "cpu (reference kernels)" so nobody mistakes them for GPU figures.
//
//   CpuBackend cpu;
//   RETURN_IF_ERROR(cpu.LoadBanks(geometry, seed));
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "kernels/moe_banks.h"
#include "server/device/backend.h"

namespace gpuprobe {

class CpuBackend : public Backend {
 public:
  // `repeat` > 1 runs each timed kernel that many times per launch: an honest, known slowdown
  // for testing what consumes the rows (a CI gate must call it slower). Rows and the
  // description say so.
  explicit CpuBackend(int repeat = 1);

  std::string Name() const override { return "cpu"; }
  std::string Description() const override;
  int64_t MemoryCapacityBytes() const override { return capacity_bytes_; }
  absl::Status CheckVariant(KernelVariant variant) const override;

  absl::Status LoadBanks(const MoeGeometry& geometry, uint64_t seed) override;
  absl::StatusOr<ArmHandle> PrepareArm(const ArmInputs& inputs) override;
  absl::StatusOr<double> TimeLaunch(ArmHandle arm, MoeKernel kernel,
                                    const TimingOptions& options) override;
  absl::StatusOr<LaunchOutput> RunOnce(ArmHandle arm, MoeKernel kernel) override;
  void ReleaseArms() override { arms_.clear(); }
  absl::StatusOr<double> Time(DeviceLaunch& launch, const TimingOptions& options) override;
  DeviceDetails Details() const override;

 private:
  struct PreparedArm {
    ArmInputs inputs;
    std::vector<double> gu_out;
    std::vector<double> down_out;
  };

  absl::StatusOr<PreparedArm*> Find(ArmHandle handle);
  absl::Status Launch(PreparedArm& arm, MoeKernel kernel);
  // Overwrites a buffer twice the last-level cache so the next launch starts cold.
  void FlushCache();
  // One sample of `run` as Time and TimeLaunch time it (cold: flushed first; graph: the mean of
  // graph_launches timed calls), each call `repeat_` runs.
  template <typename Run>
  absl::StatusOr<double> TimeHost(const TimingOptions& options, const Run& run);

  const int repeat_;
  int64_t capacity_bytes_;
  std::optional<uint64_t> seed_;
  std::unique_ptr<MoeBanks> banks_;
  std::vector<PreparedArm> arms_;
  std::vector<uint8_t> flush_buffer_;
};

}  // namespace gpuprobe
