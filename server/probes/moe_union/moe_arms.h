// The moe-union probe's device code: the weight banks of one geometry, kept on the device
// across jobs, and each arm's launches of the gate+up and down kernels, which the measurement
// module's LaunchTimer times. One implementation per backend: the float64 reference kernels on
// the cpu (cpu_moe_arms.cc), the NVFP4 sel kernels with their union-gather plans and the
// pure-read floor on cuda (cuda_moe_arms.cc).
//
//   ASSIGN_OR_RETURN(MoeArms * arms, MoeArmsOn(device));
//   RETURN_IF_ERROR(arms->LoadBanks(geometry, seed));
//   RETURN_IF_ERROR(arms->PlaceBanks());  // each block of a sweep: the banks at new addresses
//   ASSIGN_OR_RETURN(ArmHandle arm, arms->PrepareArm(inputs));
//   ASSIGN_OR_RETURN(DeviceLaunch * gate_up, arms->Launch(arm, MoeKernel::kGateUpSilu));
//   ASSIGN_OR_RETURN(double us, LaunchTimer(device).Time(*gate_up, timing));
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "kernels/moe_geometry.h"
#include "server/device/backend.h"

namespace gpuprobe {

enum class KernelVariant { kPerSlot, kUnion, kFloor, kFloorDistinct };
enum class MoeKernel { kGateUpSilu, kDown };

// "per-slot", "union", "floor", "floor-distinct"
std::string_view VariantName(KernelVariant variant);

// Whether the variant is a pure read (a checksum, no kernel output): floor or floor-distinct.
bool IsFloor(KernelVariant variant);

// The experts a floor variant reads, in order: every slot's (an expert named by k slots k
// times, the per-slot kernels' bytes) for floor; each distinct expert once, in first-appearance
// order (the least any kernel must read) for floor-distinct.
std::vector<int32_t> FloorExperts(KernelVariant variant, const std::vector<int32_t>& sel);

// What one arm's launches read besides the banks.
struct ArmInputs {
  KernelVariant variant = KernelVariant::kPerSlot;
  std::vector<int32_t> sel;  // expert of each slot; slot s belongs to token s / selected
  std::vector<float> x;      // tokens * hidden gate/up inputs
  std::vector<float> h;      // slots * ff down inputs
};

// Identifies an arm prepared since the last ReleaseArms().
using ArmHandle = int;

// What one untimed launch produced, for exactness checks.
struct LaunchOutput {
  std::vector<float> values;         // the kernel's output; empty for a floor variant
  std::optional<uint32_t> checksum;  // a floor variant's wrapping sum of every word it read
};

class MoeArms {
 public:
  virtual ~MoeArms() = default;

  // Makes the banks of (geometry, seed) current; reuses them when they already are.
  virtual absl::Status LoadBanks(const MoeGeometry& geometry, uint64_t seed) = 0;
  // Moves the loaded banks' bytes to fresh memory, on cuda at a newly drawn offset (a multiple
  // of 256 bytes under 2 MiB) into each new allocation: where the bytes lie decides which DRAM
  // channels, banks and L2 slices serve them, and banks kept in one place across a daemon's
  // jobs would hide that placement's share of the noise between daemons. Frees every prepared
  // arm first. Requires loaded banks.
  virtual absl::Status PlaceBanks() = 0;
  // Copies an arm's inputs to the device and plans its launches. Requires loaded banks.
  virtual absl::StatusOr<ArmHandle> PrepareArm(const ArmInputs& inputs) = 0;
  // `kernel` of a prepared arm, as the device times it; valid until ReleaseArms.
  virtual absl::StatusOr<DeviceLaunch*> Launch(ArmHandle arm, MoeKernel kernel) = 0;
  // Poisons the output (NaN bytes), runs `kernel` of a prepared arm once, untimed, and copies
  // the result back.
  virtual absl::StatusOr<LaunchOutput> RunOnce(ArmHandle arm, MoeKernel kernel) = 0;
  // Frees every prepared arm (the banks stay).
  virtual void ReleaseArms() = 0;
};

// The prepared arms of an implementation, by handle; each Arm holds its `gate_up` and `down`
// launches, each with fields `banks`, `arm` and `kernel`.
template <typename Arm>
class ArmTable {
 public:
  // Adds `arm`, its launches pointed at it and at `banks`.
  template <typename Banks>
  ArmHandle Add(std::unique_ptr<Arm> arm, const Banks* banks) {
    for (auto* launch : {&arm->gate_up, &arm->down}) {
      launch->banks = banks;
      launch->arm = arm.get();
    }
    arm->gate_up.kernel = MoeKernel::kGateUpSilu;
    arm->down.kernel = MoeKernel::kDown;
    arms_.push_back(std::move(arm));
    return static_cast<ArmHandle>(arms_.size() - 1);
  }
  absl::StatusOr<Arm*> Find(ArmHandle handle) {
    if (handle < 0 || handle >= static_cast<int>(arms_.size())) {
      return absl::InvalidArgumentError(absl::StrFormat("no prepared arm %d", handle));
    }
    return arms_[handle].get();
  }
  absl::StatusOr<DeviceLaunch*> Launch(ArmHandle handle, MoeKernel kernel) {
    absl::StatusOr<Arm*> arm = Find(handle);
    if (!arm.ok()) return arm.status();
    return kernel == MoeKernel::kGateUpSilu ? &(*arm)->gate_up : &(*arm)->down;
  }
  void Clear() { arms_.clear(); }

 private:
  std::vector<std::unique_ptr<Arm>> arms_;
};

// The device code on `device`, kept with the device (its banks outlive the job);
// UNIMPLEMENTED for a backend it has none for.
absl::StatusOr<MoeArms*> MoeArmsOn(Backend& device);

// What the device code of the backend named `backend` ("cpu", "cuda") implements, known
// without a device (the daemon, whose device lives in a worker, validates with these): OK, or
// UNIMPLEMENTED naming the variant; OK, or INVALID_ARGUMENT naming the field and the limit.
absl::Status CheckMoeVariant(std::string_view backend, KernelVariant variant);
absl::Status CheckMoeGeometry(std::string_view backend, const MoeGeometry& geometry,
                              KernelVariant variant);

// The implementations MoeArmsOn picks from (cuda only where built with CUDA).
std::unique_ptr<MoeArms> CpuMoeArms();
std::unique_ptr<MoeArms> CudaMoeArms(Backend& device);

}  // namespace gpuprobe
