#include "server/probes/moe_union/moe_arms.h"

#include <unordered_set>

#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#if GPUPROBE_HAVE_CUDA
#include "kernels/moe_sel_kernels.h"
#include "kernels/slot_groups.h"
#endif

namespace gpuprobe {

std::string_view VariantName(KernelVariant variant) {
  switch (variant) {
    case KernelVariant::kPerSlot:
      return "per-slot";
    case KernelVariant::kUnion:
      return "union";
    case KernelVariant::kFloor:
      return "floor";
    case KernelVariant::kFloorDistinct:
      return "floor-distinct";
  }
  return "?";
}

bool IsFloor(KernelVariant variant) {
  return variant == KernelVariant::kFloor || variant == KernelVariant::kFloorDistinct;
}

std::vector<int32_t> FloorExperts(KernelVariant variant, const std::vector<int32_t>& sel) {
  if (variant != KernelVariant::kFloorDistinct) return sel;
  std::vector<int32_t> distinct;
  std::unordered_set<int32_t> seen;
  for (int32_t expert : sel) {
    if (seen.insert(expert).second) distinct.push_back(expert);
  }
  return distinct;
}

absl::Status CheckMoeVariant(std::string_view backend, KernelVariant variant) {
  if (backend == "cpu" && variant != KernelVariant::kPerSlot) {
    return absl::UnimplementedError(absl::StrFormat(
        "variant: the cpu backend runs only per-slot kernels, not %s", VariantName(variant)));
  }
  return absl::OkStatus();
}

absl::Status CheckMoeGeometry(std::string_view backend, const MoeGeometry& geometry,
                              KernelVariant variant) {
#if GPUPROBE_HAVE_CUDA
  if (backend == "cuda") {
    return CanImplementSelKernels(geometry, variant == KernelVariant::kUnion ? kMaxGroupSlots : 1);
  }
#endif
  (void)backend;
  (void)geometry;
  (void)variant;
  return absl::OkStatus();
}

absl::StatusOr<MoeArms*> MoeArmsOn(Backend& device) {
  std::shared_ptr<void>& resident = device.Resident("moe-union");
  if (resident == nullptr) {
    std::unique_ptr<MoeArms> arms;
    if (device.Name() == "cpu") arms = CpuMoeArms();
#if GPUPROBE_HAVE_CUDA
    if (device.Name() == "cuda") arms = CudaMoeArms(device);
#endif
    if (arms == nullptr) {
      return absl::UnimplementedError(
          absl::StrFormat("the %s backend runs no moe-union kernels", device.Name()));
    }
    resident = std::shared_ptr<MoeArms>(std::move(arms));
  }
  return static_cast<MoeArms*>(resident.get());
}

}  // namespace gpuprobe
